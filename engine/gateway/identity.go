package gateway

import (
	"fmt"
	"strings"
	"sync"

	"go.mau.fi/whatsmeow"
	waCompanionReg "go.mau.fi/whatsmeow/proto/waCompanionReg"
	"go.mau.fi/whatsmeow/store"
	"google.golang.org/protobuf/proto"
)

// Identity is how the gateway's devices present themselves to the account's
// phone: the entry of its linked-devices list and the history the phone hands
// over at pairing. whatsmeow keeps it in process-wide variables (store.DeviceProps),
// so it is one per process: SetIdentity sets it once, at startup, before any
// engine pairs; a device shows what was set when it paired.
type Identity struct {
	// Name is the device's name on the phone (DefaultDeviceName when empty).
	Name string
	// Platform is the kind of client the phone shows (its icon and label): one
	// of Platforms, DefaultPlatform when empty. With "desktop" the phone lists
	// the device by Name alone; with a browser it shows "<Browser> (<Name>)".
	Platform string
	// FullSync asks the phone for its full history when pairing (the phone's
	// own bound on days and size still applies); false takes the recent
	// history only, as whatsmeow does by default.
	FullSync bool
	// FullSyncDays bounds the full history to its last days (0: the phone's
	// own bound).
	FullSyncDays uint32
}

// Defaults of Identity.
const (
	DefaultDeviceName = "Switchboard"
	DefaultPlatform   = "desktop"
)

// platform is what one Identity.Platform means to whatsmeow: the platform type
// the device registers with, and the client type and browser label of a
// phone-code pairing (the network wants its display name as "Browser (OS)").
type platform struct {
	typ     waCompanionReg.DeviceProps_PlatformType
	pair    whatsmeow.PairClientType
	browser string
}

// platforms are the values of Identity.Platform. A desktop device pairs by code
// as Chrome (the network knows no desktop client type for code pairing); the
// phone lists it by the platform it registers with.
var platforms = map[string]platform{
	"desktop": {waCompanionReg.DeviceProps_DESKTOP, whatsmeow.PairClientChrome, "Chrome"},
	"chrome":  {waCompanionReg.DeviceProps_CHROME, whatsmeow.PairClientChrome, "Chrome"},
	"firefox": {waCompanionReg.DeviceProps_FIREFOX, whatsmeow.PairClientFirefox, "Firefox"},
	"safari":  {waCompanionReg.DeviceProps_SAFARI, whatsmeow.PairClientSafari, "Safari"},
	"edge":    {waCompanionReg.DeviceProps_EDGE, whatsmeow.PairClientEdge, "Edge"},
	"opera":   {waCompanionReg.DeviceProps_OPERA, whatsmeow.PairClientOpera, "Opera"},
}

// Platforms lists the values Identity.Platform takes.
func Platforms() []string {
	return []string{"desktop", "chrome", "firefox", "safari", "edge", "opera"}
}

var (
	identityMu sync.Mutex
	identity   = Identity{Name: DefaultDeviceName, Platform: DefaultPlatform, FullSync: true}
)

// CheckIdentity says whether id is one SetIdentity takes.
func CheckIdentity(id Identity) error {
	if _, ok := platforms[strings.ToLower(id.Platform)]; !ok && id.Platform != "" {
		return fmt.Errorf("gateway: unknown platform %q (want one of %s)", id.Platform, strings.Join(Platforms(), ", "))
	}
	if len(id.Name) > 50 {
		return fmt.Errorf("gateway: device name longer than 50 bytes")
	}
	return nil
}

// SetIdentity makes id the identity of the devices this process pairs from now
// on (see Identity). Without a call the devices present themselves as
// DefaultDeviceName on DefaultPlatform and ask for the full history.
func SetIdentity(id Identity) error {
	if err := CheckIdentity(id); err != nil {
		return err
	}
	if id.Name == "" {
		id.Name = DefaultDeviceName
	}
	if id.Platform == "" {
		id.Platform = DefaultPlatform
	}
	id.Platform = strings.ToLower(id.Platform)
	identityMu.Lock()
	defer identityMu.Unlock()
	identity = id
	applyIdentity(id)
	return nil
}

// applyIdentity writes id into whatsmeow's process-wide device properties.
func applyIdentity(id Identity) {
	p := platforms[id.Platform]
	store.DeviceProps.Os = proto.String(id.Name)
	store.DeviceProps.PlatformType = p.typ.Enum()
	store.DeviceProps.RequireFullSync = proto.Bool(id.FullSync)
	store.DeviceProps.HistorySyncConfig.FullSyncDaysLimit = nil
	if id.FullSync && id.FullSyncDays > 0 {
		store.DeviceProps.HistorySyncConfig.FullSyncDaysLimit = proto.Uint32(id.FullSyncDays)
	}
}

func init() { applyIdentity(identity) }

// currentIdentity is the identity set last.
func currentIdentity() Identity {
	identityMu.Lock()
	defer identityMu.Unlock()
	return identity
}

// pairClient is the client type a phone-code pairing announces.
func (id Identity) pairClient() whatsmeow.PairClientType { return platforms[id.Platform].pair }

// displayName is the name a phone-code pairing shows on the phone, in the
// network's "Browser (OS)" shape: "Chrome (Switchboard)".
func (id Identity) displayName() string {
	return platforms[id.Platform].browser + " (" + id.Name + ")"
}
