package rest

import (
	"bufio"
	"encoding/json"
	"net/http"
)

// handlerFunc is an HTTP handler that returns its error instead of rendering it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// ServeHTTP decodes the path parameters and checks their text, calls f, renders
// a returned error as the error envelope and releases what a multipart body left
// behind.
func (f handlerFunc) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	defer releaseMultipart(r)
	err := decodePathParams(r)
	if err == nil {
		err = f(w, r)
	}
	if err != nil {
		writeError(w, r, err)
	}
}

// releaseMultipart removes the temporary files of a parsed multipart form.
func releaseMultipart(r *http.Request) {
	if r.MultipartForm != nil {
		_ = r.MultipartForm.RemoveAll()
	}
}

// dataBody is the envelope of a single resource.
type dataBody struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
}

// listBody is the envelope of a page of resources.
type listBody struct {
	Success bool `json:"success"`
	Data    any  `json:"data"`
	Limit   int  `json:"limit"`
	Skip    int  `json:"skip"`
	Total   int  `json:"total"`
}

func writeData(w http.ResponseWriter, status int, data any) error {
	writeJSON(w, status, dataBody{Success: true, Data: data})
	return nil
}

func writeList(w http.ResponseWriter, data any, limit, skip, total int) error {
	writeJSON(w, http.StatusOK, listBody{Success: true, Data: data, Limit: limit, Skip: skip, Total: total})
	return nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

// writeDataStreamed renders {"success":true,"data":{<head fields>,"<name>":[items]}}
// item by item, so that a large answer (latest-chats holds up to 20,000 messages)
// is never held whole in one buffer. head is a struct or map of the other fields
// of data; name is the list's field. Once the status is written an error can no
// longer be answered: a failure cuts the body short (invalid JSON), as a lost
// connection would.
func writeDataStreamed[T any](w http.ResponseWriter, head any, name string, items []T) error {
	fields, err := json.Marshal(head)
	if err != nil {
		return err
	}
	key, err := json.Marshal(name)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 32<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	_, _ = bw.WriteString(`{"success":true,"data":`)
	if len(fields) > 2 { // {"a":1} -> {"a":1,"name":[
		_, _ = bw.Write(fields[:len(fields)-1])
		_ = bw.WriteByte(',')
	} else {
		_ = bw.WriteByte('{')
	}
	_, _ = bw.Write(key)
	_, _ = bw.WriteString(":[")
	for i := range items {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		if enc.Encode(items[i]) != nil {
			return nil
		}
	}
	_, _ = bw.WriteString("]}}\n")
	_ = bw.Flush()
	return nil
}
