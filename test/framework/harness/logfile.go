package harness

import (
	"io"
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"go.uber.org/zap/zapcore"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/capwin/capwin/internal/logredact"
)

// LogVerbosity is the highest V level the controllers or client-go log at; LogControllers
// logs every level up to it.
const LogVerbosity = 10

// LogToFile sends the controllers' logs (controller-runtime's and client-go's) to
// <dir>/controllers.log, creating dir; close the returned file when done.
func LogToFile(dir string) (logr.Logger, *os.File, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return logr.Discard(), nil, err
	}
	f, err := os.Create(filepath.Join(dir, "controllers.log"))
	if err != nil {
		return logr.Discard(), nil, err
	}
	return setControllersLogger(zap.New(zap.WriteTo(f))), f, nil
}

// LogControllers sends the controllers' logs (controller-runtime's and client-go's) at every
// verbosity up to LogVerbosity to the file path, and to also when it is not nil, for the secret
// scan (ScanSecrets); close the returned file when done.
func LogControllers(path string, also io.Writer) (*os.File, error) {
	f, err := os.Create(path) //nolint:gosec // G304: the caller's log file
	if err != nil {
		return nil, err
	}
	var out io.Writer = f
	if also != nil {
		out = io.MultiWriter(f, also)
	}
	setControllersLogger(zap.New(zap.WriteTo(out), zap.Level(zapcore.Level(-LogVerbosity))))
	return f, nil
}

// setControllersLogger makes log the logger of controller-runtime and klog (client-go), without
// client-go's API bodies, as the managers' binaries do (internal/manager).
func setControllersLogger(log logr.Logger) logr.Logger {
	log = logredact.Logger(log)
	ctrl.SetLogger(log)
	klog.SetLoggerWithOptions(log, klog.ContextualLogger(true)) // client-go's own messages (client-side throttling) go there too
	klog.SetLogFilter(logredact.Filter{})
	return log
}
