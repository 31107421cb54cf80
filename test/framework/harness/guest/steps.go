package guest

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/capwin/capwin/bootstrap/pkg/userdata"
	"github.com/capwin/capwin/internal/test/containerdcfg"
)

// do runs one step's observable effects. What only a real Windows would show (services, the
// registry, firewall rules, Defender) is left out; files are written as the script writes them.
func (s *script) do(ctx context.Context, name string) error {
	if f := s.g.cfg.Faults.FailAt; f != "" && strings.EqualFold(f, name) {
		return fmt.Errorf("simulated failure of step %s (Faults.FailAt)", name)
	}
	doc := s.doc
	switch name {
	case "preflight":
		if int(s.g.cfg.Build) < doc.MinimumBuild {
			// The script's own words (the provider shows them in a condition).
			return fmt.Errorf("Windows build %d is older than the oldest supported build %d (Windows Server 2022)", //nolint:staticcheck // ST1005: the script's own words, which start with the name Windows
				s.g.cfg.Build, doc.MinimumBuild)
		}
		s.log(fmt.Sprintf("Windows build %d; Kubernetes %s", s.g.cfg.Build, doc.KubernetesVersion))
	case "network":
		return s.applyNetwork()
	case "time":
		if doc.Time != nil && doc.Time.Timezone != "" {
			return s.g.setTimezone(doc.Time.Timezone)
		}
	case "domain":
		return s.joinDomain()
	case "domainGroups":
		return s.waitGroups(ctx)
	case "users":
		for _, u := range doc.Users {
			if len(u.SSHAuthorizedKeys) > 0 {
				s.writeKeys(`C:\Users\`+u.Name+`\.ssh\authorized_keys`, u.SSHAuthorizedKeys)
			}
		}
		if len(doc.AdminKeys) > 0 {
			s.writeKeys(`C:\ProgramData\ssh\administrators_authorized_keys`, doc.AdminKeys)
		}
	case "features":
		return s.installFeatures()
	case "downloads":
		// No internet here: the file stands in for the verified download.
		for _, d := range doc.Downloads {
			s.log(fmt.Sprintf("downloading %s (attempt 1)", d.URL))
			if err := s.install(d); err != nil {
				return err
			}
		}
	case "disks":
		return s.prepareDisks()
	case "containerd":
		// The image has the containerd service; only a changed config is written.
		c := doc.Containerd
		s.g.mu.Lock()
		s.g.containerdPath = c.ConfigPath
		if s.g.containerdLog == nil { // the service's --log-file (its rotation comes below)
			s.g.containerdLog = &nodeLog{fs: s.g.fs, path: c.LogFile}
		}
		s.g.mu.Unlock()
		if old, ok := s.g.fs.read(c.ConfigPath); !ok || string(old) != c.Config {
			s.g.fs.write(c.ConfigPath, []byte(c.Config))
		}
		for _, f := range c.Hosts {
			data, err := base64.StdEncoding.DecodeString(f.Content)
			if err != nil {
				return fmt.Errorf("%s: %w", f.Path, err)
			}
			s.g.fs.write(f.Path, data)
		}
		if err := s.startContainerd(ctx, c.Directory); err != nil {
			return err
		}
		s.running["containerd"] = c.Directory + `\containerd.exe`
		if err := s.registerLogRotation(c); err != nil {
			return err
		}
		s.g.containerdLine("containerd successfully booted")
	case "prePull":
		return s.prePull(ctx)
	case "files":
		return s.writeFiles()
	case "preJoin":
		return s.userCommands(name, doc.PreJoin)
	case "kubelet":
		// The service's command line: the kubelet started by kubeadm join reads its flags here,
		// and kube-log-runner in front of it keeps its output.
		s.kubeletArgs = append([]string(nil), doc.Kubelet.Args...)
		l, err := s.g.runnerLog(s.kubeletWrapper())
		if err != nil {
			return err
		}
		if l != nil && l.maxSize == 0 {
			rotatedByTask(l, doc.Containerd.LogRotation) // kube-log-runner before v1.34
		}
		s.g.mu.Lock()
		s.g.kubeletLog = l
		s.g.mu.Unlock()
	case "join":
		return s.join(ctx)
	case "postJoin":
		return s.userCommands(name, doc.PostJoin)
	case "finish":
		s.g.fs.write(doc.Paths.Sentinel, []byte("success\r\n"))
		s.g.fs.remove(doc.Paths.StateDir + `\bootstrap.ps1`)
	}
	return nil
}

// prePull pulls as the script does: each image reported, resolved through containerd's registry
// folders (as ctr --hosts-dir reads them); an unpullable image is logged, and the bootstrap goes on.
func (s *script) prePull(ctx context.Context) error {
	p := s.doc.PrePull
	if p == nil {
		return nil
	}
	tmp, err := s.containerdFiles(s.doc.Containerd.Directory)
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	images, err := s.loadContainerd(ctx, tmp)
	if err != nil {
		return err
	}
	certs := filepath.Join(tmp, filepath.Base(strings.ReplaceAll(p.HostsDir, `\`, "/")))
	for i, im := range p.Images {
		msg := fmt.Sprintf("pulling image %d of %d: %s", i+1, len(p.Images), im.Ref)
		s.log(msg)
		s.send(ctx, "prePull", "Running", msg)
		host, err := containerdcfg.RegistryOf(im.Ref)
		if err != nil {
			return err
		}
		endpoints, err := containerdcfg.Resolve(ctx, images, certs, host)
		if err != nil || len(endpoints) == 0 || slices.Contains(s.g.cfg.Faults.UnpullableImages, im.Ref) {
			s.log(fmt.Sprintf("pulling %s failed (exit code 1): %v", im.Ref, err))
			continue
		}
		s.log(fmt.Sprintf("pulled %s from %s", im.Ref, endpoints[0].URL))
		s.g.mu.Lock()
		s.g.pulled = append(s.g.pulled, ImagePull{Image: im.Ref, Endpoints: endpoints})
		s.g.mu.Unlock()
	}
	return nil
}

func (s *script) writeKeys(path string, keys []string) {
	s.g.fs.write(path, []byte(strings.Join(keys, "\n")+"\n"))
}

// installFeatures enables missing Windows features; they need a restart, after which the
// script continues (the image has Containers; Hyper-V isolation adds Hyper-V).
func (s *script) installFeatures() error {
	var pending []string
	for _, f := range s.doc.Features {
		if s.features[strings.ToLower(f)] {
			continue
		}
		s.log("enabling Windows feature " + f)
		s.features[strings.ToLower(f)] = true
		pending = append(pending, f)
	}
	if len(pending) > 0 {
		return &rebootRequest{reason: "Windows features need a restart: " + strings.Join(pending, ", ")}
	}
	return nil
}

// writeFiles writes the document's files; an appended file is appended once, recorded by index.
func (s *script) writeFiles() error {
	for i, f := range s.doc.Files {
		data, err := base64.StdEncoding.DecodeString(f.Content)
		if err != nil {
			return fmt.Errorf("file %s: %w", f.Path, err)
		}
		if !f.Append {
			s.g.fs.write(f.Path, data)
			continue
		}
		marker := fmt.Sprintf("append-%d", i)
		if !s.isDone(marker) {
			s.g.fs.appendTo(f.Path, data)
			s.setDone(marker)
		}
	}
	return nil
}

// userCommands writes each user command file and "runs" it once (its code is not executed).
func (s *script) userCommands(kind string, files []userdata.DocFile) error {
	for i, f := range files {
		marker := fmt.Sprintf("%s-%d", kind, i)
		if s.isDone(marker) {
			continue
		}
		data, err := base64.StdEncoding.DecodeString(f.Content)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		s.g.fs.write(f.Path, data)
		s.log("running " + f.Path)
		s.setDone(marker)
	}
	return nil
}
