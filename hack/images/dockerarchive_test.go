package main

import (
	"io"
	"os"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

// TestDockerArchive: the linux/amd64 image of a release archive comes out as a docker tarball
// with the same config (so the same image ID in Docker) and the archive's name and tag.
func TestDockerArchive(t *testing.T) {
	idx, archive := shared(t, "capwin-infrastructure")
	img, platform := onlyImage(t, idx)
	file, err := dockerArchive(archive, platform, t.TempDir())
	if err != nil || file == "" {
		t.Fatalf("dockerArchive: %q, %v", file, err)
	}
	tag := "example.com/capwin/capwin-infrastructure:v0.0.0-test"
	back, err := tarball.ImageFromPath(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := img.ConfigName()
	if got, err := back.ConfigName(); err != nil || got != want {
		t.Errorf("config %v (%v), want %v", got, err, want)
	}
	m, err := tarball.LoadManifest(func() (io.ReadCloser, error) { return os.Open(file) })
	if err != nil || len(m) != 1 || len(m[0].RepoTags) != 1 || m[0].RepoTags[0] != tag {
		t.Errorf("docker manifest %+v (%v), want the tag %s", m, err, tag)
	}
	if other, err := dockerArchive(archive, v1.Platform{OS: "windows", Architecture: "amd64"}, t.TempDir()); err != nil || other != "" {
		t.Errorf("windows/amd64 of a Linux image: %q, %v", other, err)
	}
}
