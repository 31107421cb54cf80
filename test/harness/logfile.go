package harness

import (
	"os"
	"path/filepath"

	"github.com/go-logr/logr"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

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
	log := zap.New(zap.WriteTo(f))
	ctrl.SetLogger(log)
	klog.SetLogger(log) // client-go's own messages (client-side throttling) go to the file too
	return log, f, nil
}
