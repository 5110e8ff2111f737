package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/tdsextract/tdsextract/internal/secret"
)

// A Config printed any way a log line or an error might print it shows
// neither its password nor its access token.
func TestConfigRedactsSecrets(t *testing.T) {
	s := secret.Secret("hunter2;@#")
	c := Config{Host: "h", Password: s, AccessToken: s}
	for _, o := range []string{fmt.Sprintf("%v", c), fmt.Sprintf("%+v", c), fmt.Sprintf("%#v", c), fmt.Sprint(&c)} {
		if strings.Contains(o, "hunter") {
			t.Errorf("secret leaked: %s", o)
		}
		if !strings.Contains(o, "[REDACTED]") {
			t.Errorf("no redaction marker: %s", o)
		}
	}
}
