package campaigns

import (
	"maps"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Variable rules, from the reference contract.
const (
	MaxVariables     = 32
	MaxVariableValue = 1024
)

// VariableKeyRE is the rule of a variable's key.
var VariableKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]{0,31}$`)

// Built-in tokens, available whatever a contact's variables; a variable of the same
// name overrides one.
const (
	BuiltinWhatsAppName = "whatsappname" // the contact's own (push) name, or their address-book name
	BuiltinDisplayName  = "displayname"  // firstname + lastname variables, else whatsappname, else the phone
	BuiltinPhone        = "phone"        // +<digits> of a contact chat, or the chat id
	BuiltinMobile       = "mobile"       // the same as phone
)

// Builtins lists the built-in tokens.
var Builtins = []string{BuiltinWhatsAppName, BuiltinDisplayName, BuiltinPhone, BuiltinMobile}

// tokenRE finds single-brace tokens; a doubled brace is literal text (see Render).
var tokenRE = regexp.MustCompile(`\{\{|\}\}|\{([^{}\n]{1,64})\}`)

// Token names the key a token's text looks up: lower case, whitespace stripped.
func Token(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), "")) }

// Tokens lists the distinct keys the template text uses, in order of first use.
func Tokens(text string) []string {
	var out []string
	seen := map[string]bool{}
	forEach(text, func(_ string, key string) string {
		if !seen[key] {
			seen[key] = true
			out = append(out, key)
		}
		return ""
	})
	return out
}

// forEach calls fn for each token of text (its literal text and its key) and
// returns text with each token replaced by what fn returns; {{ and }} are kept as
// they are.
func forEach(text string, fn func(literal, key string) string) string {
	return tokenRE.ReplaceAllStringFunc(text, func(m string) string {
		if m == "{{" || m == "}}" {
			return m
		}
		key := Token(m[1 : len(m)-1])
		if key == "" {
			return m
		}
		return fn(m, key)
	})
}

// Contact is what a template is rendered for.
type Contact struct {
	To        string            // the chat id
	Variables map[string]string // as stored; keys are matched case-insensitively
	Name      string            // the contact's name in the store, if any
}

// Lookup returns the value of key for c: a variable (any case), else a built-in.
// ok is false when c has neither.
func (c Contact) Lookup(key string) (string, bool) {
	for k, v := range c.Variables {
		if strings.ToLower(k) == key {
			return v, true
		}
	}
	switch key {
	case BuiltinWhatsAppName:
		return c.Name, true
	case BuiltinPhone, BuiltinMobile:
		return Phone(c.To), true
	case BuiltinDisplayName:
		first, _ := c.lookupVar("firstname")
		last, _ := c.lookupVar("lastname")
		if n := strings.TrimSpace(first + " " + last); n != "" {
			return n, true
		}
		if c.Name != "" {
			return c.Name, true
		}
		return Phone(c.To), true
	}
	return "", false
}

func (c Contact) lookupVar(key string) (string, bool) {
	for k, v := range c.Variables {
		if strings.ToLower(k) == key {
			return v, true
		}
	}
	return "", false
}

// Phone is the phone form of a contact chat id (+<digits>), or the chat id itself.
func Phone(to string) string {
	if digits, ok := strings.CutSuffix(to, "@c.us"); ok {
		return "+" + digits
	}
	return to
}

// Missing lists the keys of text that c has no value for.
func Missing(text string, c Contact) []string {
	var out []string
	for _, key := range Tokens(text) {
		if _, ok := c.Lookup(key); !ok {
			out = append(out, key)
		}
	}
	return out
}

// Render resolves the tokens of text for c. A token c has no value for stays as
// it was written ({token}); {{ and }} stay as they are.
func Render(text string, c Contact) string {
	return forEach(text, func(literal, key string) string {
		if v, ok := c.Lookup(key); ok {
			return v
		}
		return literal
	})
}

// NeedsName reports whether rendering text may need the contact's stored name.
func NeedsName(text string) bool {
	for _, k := range Tokens(text) {
		if k == BuiltinWhatsAppName || k == BuiltinDisplayName {
			return true
		}
	}
	return false
}

// CheckVariables returns the problems of a contact's variables: too many, a bad
// key, a value too long, in the order of the keys. path prefixes each
// problem's path.
func CheckVariables(vars map[string]string, add func(path, code, msg string)) {
	if len(vars) > MaxVariables {
		add("variables", "too_big", "at most 32 variables per contact")
	}
	seen := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(vars)) {
		v := vars[k]
		if !VariableKeyRE.MatchString(k) {
			add("variables."+k, "invalid_string", "variable keys must match ^[A-Za-z_][A-Za-z0-9_]{0,31}$")
			continue
		}
		if other, dup := seen[strings.ToLower(k)]; dup {
			add("variables."+k, "invalid_string", "variable keys are case-insensitive: "+k+" and "+other+" are the same key")
		}
		seen[strings.ToLower(k)] = k
		if utf8.RuneCountInString(v) > MaxVariableValue {
			add("variables."+k, "too_big", "variable values must be at most 1024 characters")
		}
	}
}
