package ratelimit

import (
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"

	"github.com/redis/go-redis/v9"
)

// RouteRedisLogs makes go-redis write its own log lines (failed dials,
// dropped connections) to log, as warnings with the line as the message,
// instead of as unformatted text on stderr beside drip's JSON log.
//
// go-redis has one logger for the whole process, so this is process-wide:
// call it once at start, before any Redis client is made; the last call
// wins. A nil log is ignored.
func RouteRedisLogs(log *slog.Logger) {
	if log == nil {
		return
	}
	redis.SetLogger(redisLog{log})
}

// redisLog is go-redis's logging interface over slog.
type redisLog struct{ log *slog.Logger }

// Printf logs one go-redis line. go-redis formats addresses and errors into
// its lines, never credentials, and drip never hands it a URL to print; a
// URL's user and password are cut out all the same, should a future
// version format one.
func (l redisLog) Printf(ctx context.Context, format string, v ...any) {
	msg := strings.TrimSpace(fmt.Sprintf(format, v...))
	l.log.WarnContext(ctx, urlUserinfo.ReplaceAllString(msg, "${1}REDACTED@"), "component", "go-redis")
}

// urlUserinfo is a URL's scheme and userinfo, up to the last '@' before a
// blank, quote or bracket, since a password written unescaped may hold '/',
// ':' or '@'.
var urlUserinfo = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://)[^\s"'<>()\[\]{}]*@`)
