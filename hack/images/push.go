package main

import (
	"context"
	"flag"
	"fmt"
	"path"
	"path/filepath"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

func pushCmd(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("push", flag.ExitOnError)
	out := fs.String("out", "out", "folder with the image archives of images build")
	registry := fs.String("registry", "", "push to this registry instead of the one the archives name")
	_ = fs.Parse(args)
	archives, err := filepath.Glob(filepath.Join(*out, "*.oci.tar"))
	if err != nil {
		return err
	}
	if len(archives) == 0 {
		return fmt.Errorf("no *.oci.tar in %s: run make release first", *out)
	}
	for _, a := range archives {
		ref, err := push(ctx, a, *registry, remote.WithAuthFromKeychain(authn.DefaultKeychain))
		if err != nil {
			return err
		}
		fmt.Println(ref)
	}
	return nil
}

// push pushes one archive (to registry, when not empty, keeping the image name and tag) and
// returns the pushed reference with its digest. Credentials come from the Docker config
// (docker login, crane auth login) like docker push's.
func push(ctx context.Context, archive, registry string, opts ...remote.Option) (string, error) {
	ref, idx, cleanup, err := readArchive(archive)
	if err != nil {
		return "", err
	}
	defer cleanup()
	if registry != "" {
		repo := ref.RepositoryStr()
		if ref, err = name.NewTag(registry + "/" + path.Base(repo) + ":" + ref.TagStr()); err != nil {
			return "", err
		}
	}
	if err := remote.WriteIndex(ref, idx, append(opts, remote.WithContext(ctx))...); err != nil {
		return "", fmt.Errorf("push %s: %w", ref, err)
	}
	d, err := idx.Digest()
	if err != nil {
		return "", err
	}
	return ref.String() + "@" + d.String(), nil
}
