package webhooks

import (
	"k8s.io/apimachinery/pkg/util/validation/field"

	infrav1 "github.com/capwin/capwin/api/infrastructure/v1beta1"
	"github.com/capwin/capwin/infrastructure/pkg/guest"
)

// validateNaming checks a machine's naming template where it is set: Windows machines only, and a
// template that gives every Machine a valid computer name of its own (guest.CheckNamingTemplate).
func validateNaming(os infrav1.OperatingSystem, naming *infrav1.NamingStrategy, path *field.Path) field.ErrorList {
	if naming == nil {
		return nil
	}
	if os == infrav1.OSLinux {
		return field.ErrorList{field.Forbidden(path, "names Windows computers; Linux machines keep the Machine's name: remove it")}
	}
	if err := guest.CheckNamingTemplate(naming.Template); err != nil {
		return field.ErrorList{field.Invalid(path.Child("template"), naming.Template, err.Error())}
	}
	return nil
}
