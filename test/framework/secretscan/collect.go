package secretscan

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
)

// bootstrapToken is a kubeadm bootstrap token, id.secret.
var bootstrapToken = regexp.MustCompile(`\b([a-z0-9]{6})\.([a-z0-9]{16})\b`)

// AddSecret records the credentials a Secret holds:
//   - the value of every key named password or ending in "password" (vCenter and Hyper-V logins,
//     guest, registry and domain credentials, as capwin's Secrets name them);
//   - a docker config's passwords, auths and identity tokens;
//   - a bootstrap token Secret's token;
//   - the bootstrap tokens inside bootstrap data (a data Secret's value: Cluster API's cloud-config,
//     capwin's user data with its data document).
func (s *Scanner) AddSecret(sec *corev1.Secret) {
	ref := "Secret " + sec.Namespace + "/" + sec.Name
	for key, v := range sec.Data {
		if strings.HasSuffix(strings.ToLower(key), "password") {
			s.Add(fmt.Sprintf("%s key %s", ref, key), string(v))
		}
	}
	if cfg, ok := sec.Data[corev1.DockerConfigJsonKey]; ok {
		s.addDockerConfig(ref, cfg)
	}
	if sec.Type == corev1.SecretTypeBootstrapToken {
		id, secret := string(sec.Data["token-id"]), string(sec.Data["token-secret"])
		s.Add(ref+" (bootstrap token secret)", secret)
		s.Add(ref+" (bootstrap token)", id+"."+secret)
	}
	if v, ok := sec.Data["value"]; ok {
		texts := []string{string(v)}
		if u, err := userdata.Unpack(v); err == nil {
			texts = append(texts, string(u.Data)) // the data document, decoded from the script's data line
		}
		for _, t := range texts {
			for _, m := range bootstrapToken.FindAllStringSubmatch(t, -1) {
				s.Add(ref+" (bootstrap token in the data)", m[0])
				s.Add(ref+" (bootstrap token secret in the data)", m[2])
			}
		}
	}
}

func (s *Scanner) addDockerConfig(ref string, data []byte) {
	var cfg struct {
		Auths map[string]struct {
			Password      string `json:"password"`
			Auth          string `json:"auth"`
			IdentityToken string `json:"identitytoken"`
		} `json:"auths"`
	}
	if json.Unmarshal(data, &cfg) != nil {
		return
	}
	for registry, a := range cfg.Auths {
		name := fmt.Sprintf("%s registry %s", ref, registry)
		s.Add(name+" password", a.Password)
		s.Add(name+" auth", a.Auth)
		s.Add(name+" identity token", a.IdentityToken)
	}
}

// Watch records the credentials of every Secret of a cluster (namespace "" for all) from now until
// ctx ends, so that short-lived ones (bootstrap tokens, data Secrets) are caught too. It returns
// once the Secrets that exist are recorded.
func (s *Scanner) Watch(ctx context.Context, cfg *rest.Config, namespace string) error {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Secrets().Informer()
	add := func(obj any) {
		if sec, ok := obj.(*corev1.Secret); ok {
			s.AddSecret(sec)
		}
	}
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    add,
		UpdateFunc: func(_, obj any) { add(obj) },
	}); err != nil {
		return err
	}
	factory.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("watch Secrets at %s: %w", cfg.Host, context.Cause(ctx))
	}
	return nil
}
