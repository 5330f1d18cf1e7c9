// Command drip is the faucet payout service: drip serve runs it, drip
// migrate prepares its database, drip admin operates it. The command line
// is dispatched here and in admin.go; commands.go describes it for the
// help and the shell completion, flags.go reads flags from the command
// line, the environment and the --config file.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"syscall"

	"github.com/dripfaucet/drip/internal/drip"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run executes one command line and returns the process exit code:
// 0 success, 1 failure, 2 usage error.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage())
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = serve(ctx, args[1:], stdout, stderr)
	case "migrate":
		err = migrate(ctx, args[1:], stdout)
	case "admin":
		err = admin(ctx, args[1:], stdout, stderr)
	case "bench":
		err = benchmark(ctx, args[1:], stdout, stderr)
	case "version", "--version", "-version":
		err = printVersion(ctx, args[1:], stdout)
	case "completion":
		err = completion(ctx, args[1:], stdout)
	case "help", "-h", "-help", "--help":
		if len(args) > 1 && args[0] == "help" { // drip help admin key mint
			return run(ctx, append(slices.Clone(args[1:]), "--help"), stdout, stderr)
		}
		fmt.Fprint(stdout, usage())
		return 0
	default:
		fmt.Fprintf(stderr, "drip: unknown command %q\n\n%s", args[0], usage())
		return 2
	}
	var ue usageError
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "drip: %s\n", ue.msg)
		return 2
	default:
		fmt.Fprintf(stderr, "drip: %s\n", message(err))
		return 1
	}
}

// usageError is a command line that cannot be run as written.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// message is what the operator sees of an error: an application error's
// message, or the error itself (operators may see internal detail).
func message(err error) string {
	if drip.ErrorCode(err) != drip.CodeInternal {
		return drip.ErrorMessage(err)
	}
	return err.Error()
}
