package webhooks

import (
	"github.com/distribution/reference"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
)

// validatePrePull checks that each image to pre-pull is a reference a pod could name.
func validatePrePull(p *bootstrapv1.PrePull, path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	var errs field.ErrorList
	for i, image := range p.Images {
		if _, err := reference.ParseNormalizedNamed(image); err != nil {
			errs = append(errs, field.Invalid(path.Child("images").Index(i), image,
				"must be an image reference as a pod names it, e.g. mcr.microsoft.com/windows/servercore:ltsc2022: "+err.Error()))
		}
	}
	return errs
}
