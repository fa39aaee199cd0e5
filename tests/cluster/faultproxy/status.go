package main

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// status is a Kubernetes meta/v1 Status, with its fields in the order the apiserver writes them.
type status struct {
	Kind       string   `json:"kind"`
	APIVersion string   `json:"apiVersion"`
	Metadata   struct{} `json:"metadata"`
	Status     string   `json:"status"`
	Message    string   `json:"message"`
	Reason     string   `json:"reason"`
	Code       int      `json:"code"`
}

// reasons maps an HTTP code to the Status reason the apiserver gives it (k8s.io/apimachinery
// pkg/apis/meta/v1 StatusReason*). 410 is "Expired", what a too old resourceVersion gets.
var reasons = map[int]string{
	400: "BadRequest",
	401: "Unauthorized",
	403: "Forbidden",
	404: "NotFound",
	405: "MethodNotAllowed",
	406: "NotAcceptable",
	409: "Conflict",
	410: "Expired",
	413: "RequestEntityTooLarge",
	415: "UnsupportedMediaType",
	422: "Invalid",
	429: "TooManyRequests",
	500: "InternalError",
	502: "ServiceUnavailable",
	503: "ServiceUnavailable",
	504: "Timeout",
}

func reasonFor(code int) string {
	if r, ok := reasons[code]; ok {
		return r
	}
	if code >= 500 {
		return "InternalError"
	}
	return "Unknown"
}

func newStatus(code int, reason, message string) status {
	return status{Kind: "Status", APIVersion: "v1", Status: "Failure", Message: message, Reason: reason, Code: code}
}

// writeStatus answers with CODE and a Status body; 429 and 503 add Retry-After: 1 as the
// apiserver's max-in-flight filter does.
func writeStatus(w http.ResponseWriter, code int, reason, message string) {
	b, _ := json.Marshal(newStatus(code, reason, message))
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache, private")
	h.Set("Content-Length", strconv.Itoa(len(b)+1))
	if code == http.StatusTooManyRequests || code == http.StatusServiceUnavailable {
		h.Set("Retry-After", "1")
	}
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// watchErrorEvent is the line a watch stream carries when the apiserver ends it with an error
// (for 410: the resourceVersion is too old).
func watchErrorEvent(code int) []byte {
	msg := "injected fault"
	if code == http.StatusGone {
		msg = "too old resource version: injected"
	}
	ev := struct {
		Type   string `json:"type"`
		Object status `json:"object"`
	}{"ERROR", newStatus(code, reasonFor(code), msg)}
	b, _ := json.Marshal(ev)
	return append(b, '\n')
}
