// Package app assembles a running Switchboard from its parts: the database, Redis
// (embedded when none is configured), the engine registry, the asynq worker and
// scheduler, and the HTTP router.
package app

import (
	"fmt"
	"github.com/switchboardhq/switchboard/engine/host"
	"github.com/switchboardhq/switchboard/media"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/hibiken/asynq"

	"github.com/switchboardhq/switchboard"
)

// Roles a process can take.
const (
	RoleAll    = "all"
	RoleAPI    = "api"
	RoleWorker = "worker"
)

// Config is everything a Switchboard process needs to know.
type Config struct {
	// Addr is where the HTTP server listens.
	Addr string
	// DatabaseURL is sqlite://... or postgres://...
	DatabaseURL string
	// RedisURL is redis://...; empty runs an in-process Redis.
	RedisURL string
	// PublicURL is the base of URLs handed out (media links); derived from Addr when empty.
	PublicURL string
	// Role is all, api or worker.
	Role string
	// WebhookRetrySchedule is the delay before each retry of a webhook delivery.
	WebhookRetrySchedule []time.Duration
	// AllowPrivate lets webhook deliveries reach private addresses over http
	// (SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE).
	AllowPrivate bool
	// LinkPreviewAllowPrivate lets link previews fetch private addresses
	// (SWITCHBOARD_LINKPREVIEW_ALLOW_PRIVATE).
	LinkPreviewAllowPrivate bool
	// MediaAllowPrivate lets a message's mediaUrl point at a private address
	// (SWITCHBOARD_MEDIA_ALLOW_PRIVATE); engines fetch it.
	MediaAllowPrivate bool
	// MediaRetention is how long uploaded media stay served (SWITCHBOARD_MEDIA_RETENTION);
	// media.Prune deletes older ones that no waiting message needs.
	MediaRetention time.Duration
	// MediaURL says where the bytes of media live (SWITCHBOARD_MEDIA_URL): "" or
	// "db:" the database, "s3://[key:secret@]bucket/prefix?endpoint=host:port&region=…&secure=false"
	// an S3-compatible bucket shared by every replica (media.OpenBackend).
	MediaURL string
	// MediaMaxBytes bounds one stored media file (SWITCHBOARD_MEDIA_MAX_BYTES;
	// media.DefaultMaxBytes, 100 MiB, when zero).
	MediaMaxBytes int64
	// MediaDownload says which attachments of received messages are downloaded
	// into the media store on arrival (SWITCHBOARD_MEDIA_DOWNLOAD): all (the
	// default) or none (each is downloaded when first read).
	MediaDownload string
	// MediaDownloadMax bounds, by the size the network tells, the attachments
	// downloaded on arrival (SWITCHBOARD_MEDIA_DOWNLOAD_MAX, bytes; 0: the media
	// store's bound); larger ones are downloaded when first read.
	MediaDownloadMax int64
	// MediaRetryWait bounds how long the gateway waits for the sender's phone to
	// upload an expired attachment again (SWITCHBOARD_MEDIA_RETRY_WAIT, default 60s).
	MediaRetryWait time.Duration
	// OperatorToken opens the read-write queue monitor (SWITCHBOARD_OPERATOR_TOKEN).
	OperatorToken string
	// SandboxAckDelay spaces the sandbox engine's acks.
	SandboxAckDelay time.Duration
	// LoadOlderPace is the wait between two pages of one load-older call
	// (SWITCHBOARD_LOAD_OLDER_PACE; graph.DefaultLoadOlderPace, 2.5 s, when zero).
	LoadOlderPace time.Duration
	// SandboxWorkspaces names the workspaces served by a sandbox engine; "*" is
	// all, none is none (SWITCHBOARD_SANDBOX_WORKSPACES=none).
	SandboxWorkspaces []string
	// EngineMaxFrame bounds one frame a remote engine sends, in bytes
	// (SWITCHBOARD_ENGINE_MAX_FRAME; remote.DefaultMaxFrame, 16 MiB, when zero).
	EngineMaxFrame int64
	// EngineMaxBatch bounds the events of one events frame of a remote engine
	// (SWITCHBOARD_ENGINE_MAX_BATCH; remote.DefaultMaxBatch, 1000, when zero).
	EngineMaxBatch int
	// SendMediaMax and SendDocumentMax bound an attachment a gateway engine
	// sends as media or as a document, in bytes (SWITCHBOARD_SEND_MEDIA_MAX,
	// SWITCHBOARD_SEND_DOCUMENT_MAX; gateway.DefaultMaxMediaBytes, 100 MiB, and
	// gateway.DefaultMaxDocumentBytes, 2 GiB, when zero).
	SendMediaMax, SendDocumentMax int64
	// FFmpeg locates ffmpeg and ffprobe for outgoing media (SWITCHBOARD_FFMPEG):
	// empty looks them up on PATH, "off" goes without, else ffmpeg's path.
	FFmpeg string
	// PresenceTTL is how long one engine heartbeat keeps it listed.
	PresenceTTL time.Duration
	// GatewayLeaseTTL is how long a replica's claim on a gateway engine lasts
	// unrenewed (host.DefaultLeaseTTL, 30 s, when zero): how soon another replica
	// takes over the engines of one that died.
	GatewayLeaseTTL time.Duration
	// Gateway is the gateway engines' identity and manners (SWITCHBOARD_GATEWAY_*).
	Gateway GatewaySettings
	// OpenGateway opens a gateway engine; host.OpenGateway (whatsmeow) when nil.
	// Tests put a fake here.
	OpenGateway host.Opener
	// DispatchTimeout bounds one attempt to hand a message to an engine; a claim
	// five times older is taken for that of a dead worker.
	DispatchTimeout time.Duration
	// KeyTTL is how long a verified API key is remembered (auth.DefaultKeyTTL
	// when zero); a revocation is heard at once through Redis all the same.
	KeyTTL time.Duration
	// DataDir holds files kept on disk: music uploads and finished songs
	// (SWITCHBOARD_DATA_DIR, default "data").
	DataDir string
	// MusicURL is a self-hosted music-generation API server (custom_generate /
	// get) to generate songs with, and MusicKey its bearer key
	// (SWITCHBOARD_MUSIC_URL, SWITCHBOARD_MUSIC_KEY); empty renders songs locally.
	MusicURL, MusicKey string
	// MusicAllowPrivate lets MusicURL be a private address (SWITCHBOARD_MUSIC_ALLOW_PRIVATE).
	MusicAllowPrivate bool
	// MusicMaxUpload bounds a reference recording (SWITCHBOARD_MUSIC_MAX_UPLOAD,
	// bytes; music.DefaultMaxUpload when zero).
	MusicMaxUpload int64
	// MusicMinSeconds and MusicMaxSeconds bound a locally rendered song
	// (music.DefaultMinSeconds and music.DefaultMaxSeconds when zero).
	MusicMinSeconds, MusicMaxSeconds float64
	// MusicPollEvery is how often a generation asks its provider about unfinished
	// clips (music.DefaultPollEvery when zero).
	MusicPollEvery time.Duration
	// BootstrapKey creates a first key on an empty database that is not the
	// embedded default's SQLite (where it is always done); see App.Bootstrap.
	BootstrapKey bool
	// RateLimit is how many requests one API key may make, on every replica
	// together: "20/s", "1200/m" or "10000/h" (SWITCHBOARD_RATE_LIMIT,
	// DefaultRateLimit); "off" or empty for no limit. RateBurst is how many of
	// them may come at once (SWITCHBOARD_RATE_BURST, DefaultRateBurst).
	RateLimit string
	RateBurst int
	// WorkspaceRateLimit is how many requests all the keys of one workspace may
	// make together, beside each key's own limit, in the same forms
	// (SWITCHBOARD_WORKSPACE_RATE_LIMIT), with WorkspaceRateBurst of them at once
	// (SWITCHBOARD_WORKSPACE_RATE_BURST). Empty is WorkspaceRateFactor times the
	// key's limit (and a zero burst WorkspaceRateFactor times the key's burst);
	// "off" is none.
	WorkspaceRateLimit string
	WorkspaceRateBurst int
	// AddressRateLimit is how many requests one client address may make to each
	// endpoint that takes no key: the dashboard's sign-in, public media and music
	// files, the engine upgrade (SWITCHBOARD_ADDRESS_RATE_LIMIT,
	// DefaultAddressRateLimit; AddressRateBurst, SWITCHBOARD_ADDRESS_RATE_BURST,
	// DefaultAddressRateBurst); "off" or empty for no limit.
	AddressRateLimit string
	AddressRateBurst int
	// AuthFailureLimit is how many wrong credentials one client address may
	// present, as "20/h": that many at once, then one per period/count
	// (SWITCHBOARD_AUTH_FAILURE_LIMIT, DefaultAuthFailureLimit); past it, 429.
	// "off" or empty for no limit.
	AuthFailureLimit string
	// EngineSendLimit is how many direct sends (POST /v1/messages/{chatId})
	// one engine may take, on every replica together, as "60/m": that many at
	// once, then one per period/count (SWITCHBOARD_ENGINE_SEND_LIMIT,
	// DefaultEngineSendLimit); past it, 429. "off" or empty for no limit.
	// Scheduled sends and campaigns are paced, never refused.
	EngineSendLimit string
	// TrustedProxies are the proxies (addresses or prefixes) whose
	// X-Forwarded-For names the client (SWITCHBOARD_TRUSTED_PROXIES, comma
	// separated); with none, the address that connected is the client.
	TrustedProxies []netip.Prefix
	// Logger is the process logger.
	Logger *slog.Logger
}

// Default rate limit of one API key.
const (
	DefaultRateLimit = "1200/m"
	DefaultRateBurst = 100
)

// WorkspaceRateFactor is how many keys' worth of requests a workspace's keys may
// make together when WorkspaceRateLimit is not set.
const WorkspaceRateFactor = 5

// Default limits per client address: of requests to each endpoint that takes no
// key, and of wrong credentials.
const (
	DefaultAddressRateLimit = "20/s"
	DefaultAddressRateBurst = 100
	DefaultAuthFailureLimit = "20/h"
)

// DefaultEngineSendLimit is the default limit of direct sends through one engine.
const DefaultEngineSendLimit = "60/m"

// MinOperatorTokenLen is the shortest operator token a server starts with.
const MinOperatorTokenLen = 24

// minOperatorTokenChars is how many different characters an operator token holds
// at least.
const minOperatorTokenChars = 8

// ParseRateLimit parses a rate limit of requests per second, minute or hour
// ("20/s", "1200/m", "10000/h") with its burst; "off" or "" is no limit.
func ParseRateLimit(rate string, burst int) (redis_rate.Limit, error) {
	if rate == "off" || rate == "" {
		return redis_rate.Limit{}, nil
	}
	n, unit, ok := strings.Cut(rate, "/")
	per := map[string]time.Duration{"s": time.Second, "m": time.Minute, "h": time.Hour}[unit]
	count, err := strconv.Atoi(n)
	if !ok || per == 0 || err != nil || count < 1 {
		return redis_rate.Limit{}, fmt.Errorf("%q is not a rate such as 20/s, 1200/m or 10000/h (or off)", rate)
	}
	if burst < 1 {
		return redis_rate.Limit{}, fmt.Errorf("the burst must be at least 1, not %d", burst)
	}
	return redis_rate.Limit{Rate: count, Period: per, Burst: burst}, nil
}

// ParseFailureLimit parses a limit of wrong credentials, or of direct sends
// through one engine ("20/h"): that many at once, then one per period/count;
// "off" or "" is no limit.
func ParseFailureLimit(rate string) (redis_rate.Limit, error) {
	n, _, _ := strings.Cut(rate, "/")
	count, _ := strconv.Atoi(n)
	return ParseRateLimit(rate, max(count, 1))
}

// ParseTrustedProxies parses a comma-separated list of addresses and prefixes
// ("10.0.0.0/8, 192.0.2.7, fd00::/8").
func ParseTrustedProxies(s string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		if p, err := netip.ParsePrefix(part); err == nil {
			out = append(out, p.Masked())
		} else if a, err := netip.ParseAddr(part); err == nil {
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		} else {
			return nil, fmt.Errorf("%q is neither an address nor a prefix such as 10.0.0.0/8", part)
		}
	}
	return out, nil
}

// checkOperatorToken refuses an operator token that is easy to guess: shorter
// than MinOperatorTokenLen, of few different characters, or padded with spaces
// (which signing in trims). The token itself is never in the error.
func checkOperatorToken(token string) error {
	distinct := map[rune]bool{}
	for _, r := range token {
		distinct[r] = true
	}
	switch {
	case strings.TrimSpace(token) != token:
		return fmt.Errorf("the operator token must not start or end with spaces")
	case len(token) < MinOperatorTokenLen:
		return fmt.Errorf("the operator token is %d characters: it must be at least %d (e.g. the output of `openssl rand -base64 32`)", len(token), MinOperatorTokenLen)
	case len(distinct) < minOperatorTokenChars:
		return fmt.Errorf("the operator token repeats too few characters (%d different; at least %d): use a random one (e.g. `openssl rand -base64 32`)", len(distinct), minOperatorTokenChars)
	}
	return nil
}

// DefaultRetrySchedule is the spec's webhook retry schedule.
var DefaultRetrySchedule = []time.Duration{time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 2 * time.Hour, 6 * time.Hour, 12 * time.Hour}

// DefaultMediaRetention is how long uploaded media are kept by default: 30 days.
const DefaultMediaRetention = 30 * 24 * time.Hour

// Values of SWITCHBOARD_MEDIA_DOWNLOAD.
const (
	MediaDownloadAll  = "all"
	MediaDownloadNone = "none"
)

// DefaultMediaRetryWait is how long the gateway waits for a media retry's
// answer by default.
const DefaultMediaRetryWait = time.Minute

// receivedMediaFromEnv reads the settings of received media: which are
// downloaded on arrival, up to what size, and how long a media retry waits.
func (c *Config) receivedMediaFromEnv() error {
	c.MediaDownload = env("SWITCHBOARD_MEDIA_DOWNLOAD", MediaDownloadAll)
	if c.MediaDownload != MediaDownloadAll && c.MediaDownload != MediaDownloadNone {
		return fmt.Errorf("SWITCHBOARD_MEDIA_DOWNLOAD: must be all or none (got %q)", c.MediaDownload)
	}
	var err error
	if c.MediaDownloadMax, err = strconv.ParseInt(env("SWITCHBOARD_MEDIA_DOWNLOAD_MAX", "0"), 10, 64); err != nil || c.MediaDownloadMax < 0 {
		return fmt.Errorf("SWITCHBOARD_MEDIA_DOWNLOAD_MAX: must be a number of bytes (%v)", err)
	}
	if c.MediaRetryWait, err = time.ParseDuration(env("SWITCHBOARD_MEDIA_RETRY_WAIT", DefaultMediaRetryWait.String())); err != nil || c.MediaRetryWait <= 0 {
		return fmt.Errorf("SWITCHBOARD_MEDIA_RETRY_WAIT: must be a positive duration such as 60s (%v)", err)
	}
	return nil
}

// DefaultWorkspace is the workspace the embedded default bootstraps.
const DefaultWorkspace = "default"

// ConfigFromEnv returns the configuration from the environment, with defaults for
// the embedded mode.
func ConfigFromEnv() (Config, error) {
	c := Config{
		Addr:              env("SWITCHBOARD_ADDR", "127.0.0.1:8080"),
		DatabaseURL:       env("DATABASE_URL", "sqlite://switchboard.db"),
		RedisURL:          os.Getenv("REDIS_URL"),
		PublicURL:         os.Getenv("SWITCHBOARD_PUBLIC_URL"),
		Role:              env("SWITCHBOARD_ROLE", RoleAll),
		SandboxWorkspaces: sandboxWorkspaces(env("SWITCHBOARD_SANDBOX_WORKSPACES", DefaultWorkspace)),
		PresenceTTL:       30 * time.Second,
		OperatorToken:     os.Getenv("SWITCHBOARD_OPERATOR_TOKEN"),
		DataDir:           env("SWITCHBOARD_DATA_DIR", "data"),
		MusicURL:          os.Getenv("SWITCHBOARD_MUSIC_URL"),
		MusicKey:          os.Getenv("SWITCHBOARD_MUSIC_KEY"),
	}
	var err error
	if c.WebhookRetrySchedule, err = ParseSchedule(env("SWITCHBOARD_WEBHOOK_RETRY_SCHEDULE", "1m,5m,15m,1h,2h,6h,12h")); err != nil {
		return c, fmt.Errorf("SWITCHBOARD_WEBHOOK_RETRY_SCHEDULE: %w", err)
	}
	for name, dst := range map[string]*bool{
		"SWITCHBOARD_WEBHOOK_ALLOW_PRIVATE":     &c.AllowPrivate,
		"SWITCHBOARD_LINKPREVIEW_ALLOW_PRIVATE": &c.LinkPreviewAllowPrivate,
		"SWITCHBOARD_MEDIA_ALLOW_PRIVATE":       &c.MediaAllowPrivate,
		"SWITCHBOARD_MUSIC_ALLOW_PRIVATE":       &c.MusicAllowPrivate,
	} {
		if *dst, err = strconv.ParseBool(env(name, "false")); err != nil {
			return c, fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := c.mediaFromEnv(); err != nil {
		return c, err
	}
	if err := c.receivedMediaFromEnv(); err != nil {
		return c, err
	}
	if err := c.gatewayFromEnv(); err != nil {
		return c, err
	}
	if c.MusicMaxUpload, err = strconv.ParseInt(env("SWITCHBOARD_MUSIC_MAX_UPLOAD", "0"), 10, 64); err != nil {
		return c, fmt.Errorf("SWITCHBOARD_MUSIC_MAX_UPLOAD: %w", err)
	}
	if c.EngineMaxFrame, err = strconv.ParseInt(env("SWITCHBOARD_ENGINE_MAX_FRAME", "0"), 10, 64); err != nil || c.EngineMaxFrame < 0 {
		return c, fmt.Errorf("SWITCHBOARD_ENGINE_MAX_FRAME: must be a number of bytes (%v)", err)
	}
	for name, dst := range map[string]*int64{"SWITCHBOARD_SEND_MEDIA_MAX": &c.SendMediaMax, "SWITCHBOARD_SEND_DOCUMENT_MAX": &c.SendDocumentMax} {
		if *dst, err = strconv.ParseInt(env(name, "0"), 10, 64); err != nil || *dst < 0 {
			return c, fmt.Errorf("%s: must be a number of bytes (%v)", name, err)
		}
	}
	c.FFmpeg = os.Getenv("SWITCHBOARD_FFMPEG")
	if c.EngineMaxBatch, err = strconv.Atoi(env("SWITCHBOARD_ENGINE_MAX_BATCH", "0")); err != nil || c.EngineMaxBatch < 0 {
		return c, fmt.Errorf("SWITCHBOARD_ENGINE_MAX_BATCH: must be a number of events (%v)", err)
	}
	if c.BootstrapKey, err = strconv.ParseBool(env("SWITCHBOARD_BOOTSTRAP_KEY", "false")); err != nil {
		return c, fmt.Errorf("SWITCHBOARD_BOOTSTRAP_KEY: %w", err)
	}
	if c.DispatchTimeout, err = time.ParseDuration(env("SWITCHBOARD_DISPATCH_TIMEOUT", "1m")); err != nil {
		return c, fmt.Errorf("SWITCHBOARD_DISPATCH_TIMEOUT: %w", err)
	}
	if c.SandboxAckDelay, err = time.ParseDuration(env("SWITCHBOARD_SANDBOX_ACK_DELAY", "1s")); err != nil {
		return c, fmt.Errorf("SWITCHBOARD_SANDBOX_ACK_DELAY: %w", err)
	}
	if c.LoadOlderPace, err = time.ParseDuration(env("SWITCHBOARD_LOAD_OLDER_PACE", "2.5s")); err != nil || c.LoadOlderPace <= 0 {
		return c, fmt.Errorf("SWITCHBOARD_LOAD_OLDER_PACE: must be a positive duration such as 2.5s (%v)", err)
	}
	if err := c.limitsFromEnv(); err != nil {
		return c, err
	}
	return c, nil
}

// mediaFromEnv reads the media settings: retention, where the bytes live and
// the bound of one file.
func (c *Config) mediaFromEnv() error {
	var err error
	if c.MediaRetention, err = time.ParseDuration(env("SWITCHBOARD_MEDIA_RETENTION", DefaultMediaRetention.String())); err != nil {
		return fmt.Errorf("SWITCHBOARD_MEDIA_RETENTION: %w", err)
	}
	c.MediaURL = os.Getenv("SWITCHBOARD_MEDIA_URL")
	if c.MediaMaxBytes, err = strconv.ParseInt(env("SWITCHBOARD_MEDIA_MAX_BYTES", "0"), 10, 64); err != nil || c.MediaMaxBytes < 0 {
		return fmt.Errorf("SWITCHBOARD_MEDIA_MAX_BYTES: must be a number of bytes (%v)", err)
	}
	return nil
}

// rateLimit is the parsed RateLimit (checked by validate).
func (c *Config) rateLimit() redis_rate.Limit {
	l, _ := ParseRateLimit(c.RateLimit, c.RateBurst)
	return l
}

// workspaceRateLimit is the parsed WorkspaceRateLimit, or WorkspaceRateFactor
// times the key's limit when it is not set.
func (c *Config) workspaceRateLimit() (redis_rate.Limit, error) {
	key := c.rateLimit()
	burst := c.WorkspaceRateBurst
	if burst == 0 {
		burst = key.Burst * WorkspaceRateFactor
	}
	if c.WorkspaceRateLimit == "" {
		if key.IsZero() {
			return redis_rate.Limit{}, nil
		}
		return redis_rate.Limit{Rate: key.Rate * WorkspaceRateFactor, Period: key.Period, Burst: burst}, nil
	}
	if c.WorkspaceRateLimit != "off" && burst == 0 {
		burst = DefaultRateBurst * WorkspaceRateFactor // the key has no limit to take it from
	}
	return ParseRateLimit(c.WorkspaceRateLimit, burst)
}

// addressRateLimit is the parsed AddressRateLimit (checked by validate).
func (c *Config) addressRateLimit() redis_rate.Limit {
	l, _ := ParseRateLimit(c.AddressRateLimit, c.AddressRateBurst)
	return l
}

// engineSendLimit is the parsed EngineSendLimit (checked by validate).
func (c *Config) engineSendLimit() redis_rate.Limit {
	l, _ := ParseFailureLimit(c.EngineSendLimit)
	return l
}

// authFailureLimit is the parsed AuthFailureLimit (checked by validate).
func (c *Config) authFailureLimit() redis_rate.Limit {
	l, _ := ParseFailureLimit(c.AuthFailureLimit)
	return l
}

// ParseRedisURL parses REDIS_URL into the connection asynq, the monitor and
// every other Redis user share:
//
//	redis://[:password@]host:port[/db]        one server (rediss:// for TLS)
//	redis-socket://[:password@]/path/to.sock[?db=N]
//	redis-sentinel://[:password@]host:port[,host:port…][/db]?master=name[&sentinel_password=…]
//	                                          the master a Sentinel set names, followed across failovers
//	redis-cluster://[:password@]host:port[,host:port…]
//	                                          a Redis Cluster (database 0 only)
func ParseRedisURL(raw string) (asynq.RedisConnOpt, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("app: bad redis URL %s: %s", switchboard.RedactURL(raw), fmt.Sprintf(format, args...))
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, bad("%v", err)
	}
	password, _ := u.User.Password()
	addrs := strings.Split(u.Host, ",")
	switch u.Scheme {
	case "redis", "rediss", "redis-socket":
		opt, err := asynq.ParseRedisURI(raw)
		if err != nil {
			return nil, bad("%v", err)
		}
		return opt, nil
	case "redis-sentinel":
		master := u.Query().Get("master")
		if master == "" || u.Host == "" {
			return nil, bad("a Sentinel URL names its sentinels and ?master=")
		}
		db := 0
		if p := strings.Trim(u.Path, "/"); p != "" {
			if db, err = strconv.Atoi(p); err != nil || db < 0 {
				return nil, bad("the database is a number, not %q", p)
			}
		}
		return asynq.RedisFailoverClientOpt{MasterName: master, SentinelAddrs: addrs, Password: password,
			SentinelPassword: u.Query().Get("sentinel_password"), DB: db}, nil
	case "redis-cluster":
		if u.Host == "" {
			return nil, bad("a cluster URL names at least one node")
		}
		if p := strings.Trim(u.Path, "/"); p != "" && p != "0" {
			return nil, bad("a Redis Cluster has database 0 only")
		}
		return asynq.RedisClusterClientOpt{Addrs: addrs, Password: password}, nil
	default:
		return nil, bad("unknown scheme %q (redis, rediss, redis-socket, redis-sentinel or redis-cluster)", u.Scheme)
	}
}

// ParseSchedule parses a comma-separated list of durations ("1m,5m,15m").
func ParseSchedule(s string) ([]time.Duration, error) {
	var out []time.Duration
	for _, part := range strings.Split(s, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(part))
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("bad duration %q", part)
		}
		out = append(out, d)
	}
	return out, nil
}

func (c *Config) validate() error {
	switch c.Role {
	case RoleAll, RoleAPI, RoleWorker:
	default:
		return fmt.Errorf("role must be all, api or worker, not %q", c.Role)
	}
	if c.PublicURL == "" {
		c.PublicURL = "http://" + c.Addr
	}
	if c.PresenceTTL <= 0 {
		c.PresenceTTL = 30 * time.Second
	}
	if c.SandboxAckDelay <= 0 {
		c.SandboxAckDelay = time.Second
	}
	if c.MediaRetention <= 0 {
		c.MediaRetention = DefaultMediaRetention
	}
	switch c.MediaDownload {
	case "":
		c.MediaDownload = MediaDownloadAll
	case MediaDownloadAll, MediaDownloadNone:
	default:
		return fmt.Errorf("media download: must be all or none (got %q)", c.MediaDownload)
	}
	if c.MediaDownloadMax < 0 {
		return fmt.Errorf("media download max: must not be negative (got %d)", c.MediaDownloadMax)
	}
	if c.MediaRetryWait <= 0 {
		c.MediaRetryWait = DefaultMediaRetryWait
	}
	if len(c.WebhookRetrySchedule) == 0 {
		c.WebhookRetrySchedule = DefaultRetrySchedule
	}
	if c.DataDir == "" {
		c.DataDir = "data"
	}
	if _, err := ParseRateLimit(c.RateLimit, c.RateBurst); err != nil {
		return fmt.Errorf("rate limit: %w", err)
	}
	if _, err := c.workspaceRateLimit(); err != nil {
		return fmt.Errorf("workspace rate limit: %w", err)
	}
	if _, err := ParseRateLimit(c.AddressRateLimit, c.AddressRateBurst); err != nil {
		return fmt.Errorf("address rate limit: %w", err)
	}
	if _, err := ParseFailureLimit(c.AuthFailureLimit); err != nil {
		return fmt.Errorf("auth failure limit: %w", err)
	}
	if _, err := ParseFailureLimit(c.EngineSendLimit); err != nil {
		return fmt.Errorf("SWITCHBOARD_ENGINE_SEND_LIMIT: %w", err)
	}
	if err := media.CheckURL(c.MediaURL); err != nil {
		return err
	}
	if c.OperatorToken != "" {
		if err := checkOperatorToken(c.OperatorToken); err != nil {
			return fmt.Errorf("SWITCHBOARD_OPERATOR_TOKEN: %w", err)
		}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	// No log line carries a URL's query or a media token (switchboard.RedactText).
	c.Logger = slog.New(switchboard.NewRedactingHandler(c.Logger.Handler()))
	return nil
}

// sandboxWorkspaces reads SWITCHBOARD_SANDBOX_WORKSPACES: names separated by
// commas, "*" for all, "none" for none.
func sandboxWorkspaces(v string) []string {
	if v == "none" {
		return nil
	}
	return strings.Split(v, ",")
}

func env(name, def string) string {
	if v, ok := os.LookupEnv(name); ok && v != "" {
		return v
	}
	return def
}
