package webhooks

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
)

// logRequest checks a new or changed request for the node's logs (infrav1.CollectLogsAnnotation):
// its id becomes part of file names in the guest. old is nil on create; an unchanged value is not
// checked again, so that metadata updates of a stored machine keep working.
func logRequest(old, m metav1.Object) field.ErrorList {
	id, ok := m.GetAnnotations()[infrav1.CollectLogsAnnotation]
	if !ok || infrav1.ValidCollectLogsID(id) {
		return nil
	}
	if old != nil {
		if before, had := old.GetAnnotations()[infrav1.CollectLogsAnnotation]; had && before == id {
			return nil
		}
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "annotations").Key(infrav1.CollectLogsAnnotation), id,
		"a log request id is 1 to 40 lower-case letters, digits and inner hyphens")}
}
