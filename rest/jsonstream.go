package rest

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strconv"
	"strings"

	"github.com/switchboardhq/switchboard"
)

// objectScanner reads a flat JSON object field by field without holding it: the
// small values are read whole, one large string value can be read as a stream.
type objectScanner struct {
	r     *bufio.Reader
	first bool
}

// maxStreamedField bounds a field name or a small value in a streamed body.
const maxStreamedField = 4096

func newObjectScanner(r io.Reader) (*objectScanner, error) {
	sc := &objectScanner{r: bufio.NewReaderSize(r, 64<<10), first: true}
	if b, err := sc.skipSpace(); err != nil || b != '{' {
		return nil, malformed()
	}
	return sc, nil
}

func malformed() error {
	return invalidBody("", "invalid_json", "Malformed JSON body.")
}

func (sc *objectScanner) skipSpace() (byte, error) {
	for {
		b, err := sc.r.ReadByte()
		if err != nil || (b != ' ' && b != '\t' && b != '\n' && b != '\r') {
			return b, err
		}
	}
}

// next reads the name of the next field; ok is false at the end of the object.
func (sc *objectScanner) next() (name string, ok bool, err error) {
	b, err := sc.skipSpace()
	if err != nil {
		return "", false, malformed()
	}
	if b == '}' {
		return "", false, sc.end()
	}
	if !sc.first {
		if b != ',' {
			return "", false, malformed()
		}
		if b, err = sc.skipSpace(); err != nil {
			return "", false, malformed()
		}
	}
	sc.first = false
	if b != '"' {
		return "", false, malformed()
	}
	key, err := sc.small("body")
	if err != nil {
		return "", false, err
	}
	if b, err := sc.skipSpace(); err != nil || b != ':' {
		return "", false, malformed()
	}
	return key, true, nil
}

// end checks that nothing but white space follows the object.
func (sc *objectScanner) end() error {
	if _, err := sc.skipSpace(); !errors.Is(err, io.EOF) {
		return invalidBody("", "invalid_json", "The request body must hold a single JSON object.")
	}
	return nil
}

// value reads a small string value (nil for null) of the field name.
func (sc *objectScanner) value(name string) (*string, error) {
	b, err := sc.skipSpace()
	if err == nil && b == 'n' {
		rest := make([]byte, 3)
		if _, err := io.ReadFull(sc.r, rest); err != nil || string(rest) != "ull" {
			return nil, malformed()
		}
		return nil, nil
	}
	if err != nil || b != '"' {
		return nil, invalidBody(name, "invalid_type", name+" must be of type string.")
	}
	v, err := sc.small(name)
	return &v, err
}

// small reads the rest of a string whose opening quote was read.
func (sc *objectScanner) small(name string) (string, error) {
	var b bytes.Buffer
	n, err := io.Copy(&b, io.LimitReader(&jsonString{r: sc.r}, maxStreamedField+1))
	if err != nil {
		return "", err
	}
	if n > maxStreamedField {
		return "", invalidBody(name, "too_big", name+" is too long.")
	}
	return b.String(), nil
}

// stream returns the string value of the field name as a stream of its
// unescaped contents; read it to its end before calling next.
func (sc *objectScanner) stream(name string) (io.Reader, error) {
	if b, err := sc.skipSpace(); err != nil || b != '"' {
		return nil, invalidBody(name, "invalid_type", name+" must be of type string.")
	}
	return &jsonString{r: sc.r}, nil
}

// jsonString reads the contents of a JSON string, unescaped, up to its closing quote.
type jsonString struct {
	r    *bufio.Reader
	done bool
}

func (s *jsonString) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && !s.done {
		// Plain bytes are copied in bulk from the buffer; the rest one at a time.
		if s.r.Buffered() == 0 {
			_, _ = s.r.Peek(1)
		}
		chunk, _ := s.r.Peek(min(s.r.Buffered(), len(p)-n))
		plain := 0
		for plain < len(chunk) && chunk[plain] != '"' && chunk[plain] != '\\' && chunk[plain] >= 0x20 {
			plain++
		}
		if plain > 0 {
			n += copy(p[n:], chunk[:plain])
			_, _ = s.r.Discard(plain)
			continue
		}
		b, err := s.r.ReadByte()
		if err != nil {
			return n, malformed()
		}
		switch {
		case b == '"':
			s.done = true
		case b < 0x20:
			return n, malformed()
		case b == '\\':
			e, err := s.r.ReadByte()
			if err != nil {
				return n, malformed()
			}
			switch e {
			case '"', '\\', '/':
				b = e
			case 'n':
				b = '\n'
			case 'r':
				b = '\r'
			case 't':
				b = '\t'
			case 'u':
				hex := make([]byte, 4)
				if _, err := io.ReadFull(s.r, hex); err != nil {
					return n, malformed()
				}
				v, err := strconv.ParseUint(string(hex), 16, 16)
				if err != nil || v >= 0x80 { // field names and base64 are ASCII
					return n, malformed()
				}
				b = byte(v)
			default:
				return n, malformed()
			}
			p[n] = b
			n++
		default:
			p[n] = b
			n++
		}
	}
	if s.done && n == 0 {
		return 0, io.EOF
	}
	return n, nil
}

// base64Stream decodes a stream of standard base64 (or a base64 data: URL) as
// it is read; bad input fails the read with a validation error on field.
func base64Stream(r io.Reader, field string) io.Reader {
	br := bufio.NewReader(r)
	if head, _ := br.Peek(5); string(head) == "data:" {
		meta, err := br.ReadString(',')
		if err != nil || len(meta) > 256 || !strings.HasSuffix(meta, ";base64,") {
			return errReader{fieldError(field, "must be a base64 data: URL")}
		}
	}
	return &checkedBase64{r: base64.NewDecoder(base64.StdEncoding, br), field: field}
}

type checkedBase64 struct {
	r     io.Reader
	field string
}

func (c *checkedBase64) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	var corrupt base64.CorruptInputError
	if errors.As(err, &corrupt) {
		err = fieldError(c.field, "must be valid standard base64 (padded) or a base64 data: URL")
	}
	return n, err
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

func fieldError(field, msg string) error {
	return &switchboard.Error{Code: switchboard.EVALIDATION, Message: field + " " + msg + ".",
		Details: []switchboard.Detail{{Path: field, Code: "invalid_string", Message: field + " " + msg}}}
}
