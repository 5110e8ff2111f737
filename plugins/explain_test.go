package plugins

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// A call that ran out of time blames the timeout option only when one is
// set; otherwise the deadline was the extract's (errors.Is sees it), and
// the message does not say "within 0s".
func TestExplainDeadline(t *testing.T) {
	p := &process{}
	late := status.Error(codes.DeadlineExceeded, "context deadline exceeded")
	err := p.explain(late, 0)
	if !errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "timeout option") {
		t.Errorf("no timeout option: %v", err)
	}
	err = p.explain(late, 2*time.Second)
	if !strings.Contains(err.Error(), "did not answer within 2s (the timeout option)") {
		t.Errorf("timeout 2s: %v", err)
	}
}
