package mockup

import (
	"encoding/json"
	"net/http"
)

// WriteError answers a Redfish error body with one message, as BMCs do.
func WriteError(w http.ResponseWriter, status int, messageID, message string) {
	body := map[string]any{"error": map[string]any{
		"code":    messageID,
		"message": message,
		"@Message.ExtendedInfo": []any{map[string]any{
			"@odata.type": "#Message.v1_1_1.Message",
			"MessageId":   messageID,
			"Message":     message,
			"Severity":    "Critical",
		}},
	}}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}

// writeMissing answers that there is no resource at p.
func writeMissing(w http.ResponseWriter, p string) {
	WriteError(w, http.StatusNotFound, "Base.1.8.ResourceMissingAtURI", "The resource at the URI "+p+" was not found.")
}
