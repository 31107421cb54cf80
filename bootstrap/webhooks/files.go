package webhooks

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	bootstrapv1 "github.com/capwin/capwin/api/bootstrap/v1beta1"
	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

func validateFiles(files []bootstrapv1.File, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := make([]string, 0, len(files))
	for i, f := range files {
		p := path.Index(i)
		paths = append(paths, f.Path)
		if problem := windowsPathProblem(f.Path); problem != "" {
			errs = append(errs, field.Invalid(p.Child("path"), f.Path, problem))
		}
		if pathKey(f.Path) == pathKey(userdata.KubeletPatchPath) {
			errs = append(errs, field.Forbidden(p.Child("path"), "capwin writes spec.kubeletConfiguration to this file; set the kubelet's fields there"))
		}
		switch {
		case f.Content == nil && f.ContentFrom == nil:
			errs = append(errs, field.Required(p.Child("content"), "set exactly one of content and contentFrom"))
		case f.Content != nil && f.ContentFrom != nil:
			errs = append(errs, field.Forbidden(p.Child("contentFrom"), "set exactly one of content and contentFrom; content is set too"))
		case f.Content != nil:
			if problem := encodingProblem(*f.Content, f.Encoding); problem != "" {
				errs = append(errs, field.Invalid(p.Child("content"), field.OmitValueType{}, problem))
			}
		default:
			errs = append(errs, validateSecretKey(f.ContentFrom.Secret, p.Child("contentFrom", "secret"))...)
		}
	}
	return append(errs, duplicates(paths, pathKey, path, "path", `paths compare case-insensitively and / equals \`)...)
}

func validateSecretKey(s bootstrapv1.SecretKey, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(s.Name) {
		errs = append(errs, field.Invalid(path.Child("name"), s.Name, "Secret name: "+msg))
	}
	for _, msg := range validation.IsConfigMapKey(s.Key) {
		errs = append(errs, field.Invalid(path.Child("key"), s.Key, "Secret key: "+msg))
	}
	return errs
}

// encodingProblem checks inline content against its declared encoding: base64 must decode
// (whitespace and line breaks are ignored) and gzip must start with a valid gzip header.
func encodingProblem(content string, enc bootstrapv1.Encoding) string {
	data := []byte(content)
	if enc == bootstrapv1.EncodingBase64 || enc == bootstrapv1.EncodingGzipBase64 {
		decoded, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(content), ""))
		if err != nil {
			return "encoding is " + string(enc) + " but the content is not valid base64: " + err.Error()
		}
		data = decoded
	}
	if enc == bootstrapv1.EncodingGzip || enc == bootstrapv1.EncodingGzipBase64 {
		if _, err := gzip.NewReader(bytes.NewReader(data)); err != nil {
			return "encoding is " + string(enc) + " but the content is not gzip data: " + err.Error()
		}
	}
	return ""
}
