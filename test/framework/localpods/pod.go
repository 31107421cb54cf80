package localpods

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// errWaiting: the pod cannot start yet (a Secret it mounts does not exist); a kubelet keeps such
// a pod in ContainerCreating.
var errWaiting = errors.New("waiting for a volume")

// pod is the one "pod" of a Deployment: its containers' processes.
type pod struct {
	key    types.NamespacedName // the Deployment
	hash   string               // of the pod template it runs
	dir    string
	labels map[string]string
	named  map[string]int32 // container port by name
	ports  map[int32]int32  // local port by container port
	probe  *corev1.HTTPGetAction
	cancel context.CancelFunc
	done   sync.WaitGroup
}

// templateHash identifies a pod template: a change restarts the pod.
func templateHash(t corev1.PodTemplateSpec) string {
	b, _ := json.Marshal(t)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// newPod prepares d's pod in dir: its volumes and each container's command line.
func (r *Runner) newPod(ctx context.Context, d *appsv1.Deployment, dir string) (*pod, []*exec.Cmd, error) {
	spec := d.Spec.Template.Spec
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, nil, err
	}
	p := &pod{key: client.ObjectKeyFromObject(d), hash: templateHash(d.Spec.Template), dir: dir,
		labels: d.Spec.Template.Labels, named: map[string]int32{}, ports: map[int32]int32{}}
	volumes, err := r.writeVolumes(ctx, d.Namespace, spec.Volumes, filepath.Join(dir, "volumes"))
	if err != nil {
		return nil, nil, err
	}
	var cmds []*exec.Cmd
	for _, c := range spec.Containers {
		prog := r.programs[imageName(c.Image)]
		env, err := r.containerEnv(ctx, d, c)
		if err != nil {
			return nil, nil, err
		}
		args := append(append([]string(nil), c.Command...), c.Args...)
		if len(c.Command) > 0 {
			args = args[1:]
		}
		for i := range args {
			args[i] = expand(args[i], env)
		}
		mounts := map[string]string{}
		for _, m := range c.VolumeMounts {
			if local, ok := volumes[m.Name]; ok {
				mounts[strings.TrimSuffix(m.MountPath, "/")] = filepath.Join(local, m.SubPath)
			}
		}
		for i := range args {
			for from, to := range mounts {
				args[i] = strings.ReplaceAll(args[i], from, to)
			}
		}
		if prog.CertDirFlag != "" {
			if local, ok := mounts[prog.CertDirMount]; ok {
				args = withFlag(args, prog.CertDirFlag+"="+local)
			}
		}
		for _, port := range c.Ports {
			if port.Name != "" {
				p.named[port.Name] = port.ContainerPort
			}
		}
		for container := range prog.Ports {
			local, err := freePort()
			if err != nil {
				return nil, nil, err
			}
			flag, _ := prog.portFlag(container, local)
			args = withFlag(args, flag)
			p.ports[container] = local
		}
		for _, f := range prog.Flags {
			args = withFlag(args, f)
		}
		args = withFlag(args, "--kubeconfig="+r.kubeconfig)
		cmd := exec.Command(prog.Path, args...) //nolint:gosec // G204: a program of Programs, with its Deployment's arguments
		cmd.Dir = dir
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
		for k, v := range env {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
		cmds = append(cmds, cmd)
		if p.probe == nil && c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil {
			p.probe = c.ReadinessProbe.HTTPGet
		}
	}
	return p, cmds, nil
}

// writeVolumes writes the Secret volumes' keys and makes the emptyDirs under dir, and returns
// each volume's folder by name.
func (r *Runner) writeVolumes(ctx context.Context, namespace string, volumes []corev1.Volume, dir string) (map[string]string, error) {
	out := map[string]string{}
	for _, v := range volumes {
		local := filepath.Join(dir, v.Name)
		switch {
		case v.Secret != nil:
			s := &corev1.Secret{}
			if err := r.c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: v.Secret.SecretName}, s); err != nil {
				return nil, fmt.Errorf("%w: Secret %s/%s: %w", errWaiting, namespace, v.Secret.SecretName, err)
			}
			if err := os.MkdirAll(local, 0o700); err != nil {
				return nil, err
			}
			for k, b := range s.Data {
				if err := os.WriteFile(filepath.Join(local, k), b, 0o600); err != nil {
					return nil, err
				}
			}
		case v.EmptyDir != nil:
			if err := os.MkdirAll(local, 0o700); err != nil {
				return nil, err
			}
		default:
			continue
		}
		out[v.Name] = local
	}
	return out, nil
}

// containerEnv is a container's environment: values ($(VAR) of earlier ones expanded), the
// downward API's fields of this pod, and Secret and ConfigMap keys.
func (r *Runner) containerEnv(ctx context.Context, d *appsv1.Deployment, c corev1.Container) (map[string]string, error) {
	env := map[string]string{}
	fields := map[string]string{
		"metadata.namespace": d.Namespace, "metadata.name": d.Name + "-local", "metadata.uid": string(d.UID),
		"spec.nodeName": "local", "spec.serviceAccountName": d.Spec.Template.Spec.ServiceAccountName,
		"status.podIP": "127.0.0.1", "status.hostIP": "127.0.0.1",
	}
	for _, e := range c.Env {
		switch f := e.ValueFrom; {
		case f == nil:
			env[e.Name] = expand(e.Value, env)
		case f.FieldRef != nil:
			env[e.Name] = fields[f.FieldRef.FieldPath]
		case f.SecretKeyRef != nil:
			s := &corev1.Secret{}
			if err := r.c.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: f.SecretKeyRef.Name}, s); err != nil {
				return nil, fmt.Errorf("%w: Secret %s: %w", errWaiting, f.SecretKeyRef.Name, err)
			}
			env[e.Name] = string(s.Data[f.SecretKeyRef.Key])
		case f.ConfigMapKeyRef != nil:
			cm := &corev1.ConfigMap{}
			if err := r.c.Get(ctx, client.ObjectKey{Namespace: d.Namespace, Name: f.ConfigMapKeyRef.Name}, cm); err != nil {
				return nil, fmt.Errorf("%w: ConfigMap %s: %w", errWaiting, f.ConfigMapKeyRef.Name, err)
			}
			env[e.Name] = cm.Data[f.ConfigMapKeyRef.Key]
		}
	}
	return env, nil
}

var envRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// expand replaces $(VAR) by its value in env, as the kubelet does (unknown references stay).
func expand(s string, env map[string]string) string {
	return envRef.ReplaceAllStringFunc(s, func(ref string) string {
		if v, ok := env[ref[2:len(ref)-1]]; ok {
			return v
		}
		return ref
	})
}

// freePort is a free TCP port on loopback.
func freePort() (int32, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer func() { _ = l.Close() }()
	return int32(l.Addr().(*net.TCPAddr).Port), nil //nolint:gosec // G115: a port number
}

// run starts the containers and restarts each that exits (after a second), until ctx ends.
func (p *pod) run(ctx context.Context, cmds []*exec.Cmd, logDir string) {
	ctx, p.cancel = context.WithCancel(ctx)
	for i, tmpl := range cmds {
		name := fmt.Sprintf("%s_%s_%d.log", p.key.Namespace, p.key.Name, i)
		p.done.Add(1)
		go func() {
			defer p.done.Done()
			for ctx.Err() == nil {
				cmd := exec.CommandContext(ctx, tmpl.Path, tmpl.Args[1:]...) //nolint:gosec // G204: the command newPod made
				cmd.Dir, cmd.Env = tmpl.Dir, tmpl.Env
				cmd.WaitDelay = 5 * time.Second
				if f, err := os.OpenFile(filepath.Join(logDir, name), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600); err == nil {
					cmd.Stdout, cmd.Stderr = f, f
					if err := cmd.Run(); err != nil && ctx.Err() == nil {
						_, _ = fmt.Fprintf(f, "localpods: %s: %v\n", filepath.Base(cmd.Path), err)
					}
					_ = f.Close()
				}
				select {
				case <-ctx.Done():
				case <-time.After(time.Second):
				}
			}
		}()
	}
}

// stop ends the pod's processes and waits for them.
func (p *pod) stop() {
	if p.cancel != nil {
		p.cancel()
	}
	p.done.Wait()
}
