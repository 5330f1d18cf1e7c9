package server

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync"
	"time"
)

// Check is one dependency /readyz looks at.
type Check struct {
	Name string
	// Ping answers nil when the dependency answers.
	Ping func(context.Context) error
	// Optional marks a dependency drip serves without, worse (Redis: rate
	// limits fall back to per node): it is reported, but does not make
	// the node unready, or every node would be taken out of the balancer
	// together.
	Optional bool
}

// readyTimeout bounds each check.
const readyTimeout = 2 * time.Second

// readyReply is /readyz's body: "ok", or which dependency is "down".
type readyReply struct {
	Status string            `json:"status"` // "ready" or "unavailable"
	Checks map[string]string `json:"checks"` // name -> "ok" or "down"
}

// readyz answers 200 when every required check passes, else 503, naming
// what is down (D58). Causes go to the log, never to the caller: they can
// name internal hosts. /healthz, by contrast, says only that the process
// serves.
func readyz(checks []Check, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		defer cancel()
		reply := readyReply{Status: "ready", Checks: make(map[string]string, len(checks))}
		errs := make([]error, len(checks))
		var wg sync.WaitGroup
		for i, c := range checks {
			wg.Go(func() { errs[i] = c.Ping(ctx) })
		}
		wg.Wait()
		status := http.StatusOK
		for i, c := range checks {
			if errs[i] == nil {
				reply.Checks[c.Name] = "ok"
				continue
			}
			reply.Checks[c.Name] = "down"
			log.ErrorContext(r.Context(), "readiness check failed", "check", c.Name, "err", errs[i])
			if !c.Optional {
				status, reply.Status = http.StatusServiceUnavailable, "unavailable"
			}
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if status != http.StatusOK {
			w.Header().Set("Retry-After", "5")
		}
		w.WriteHeader(status)
		_ = json.NewEncoder(w).Encode(reply)
	})
}
