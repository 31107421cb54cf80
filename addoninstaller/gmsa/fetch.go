package gmsa

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// maxFile bounds a download: the deploy files are a few kilobytes.
const maxFile = 4 << 20

// fetch downloads url and returns its bytes only when their SHA-256 is want. A wrong checksum
// is final; an unreachable server or an HTTP error is retried.
func fetch(ctx context.Context, o *Options, url, want string) ([]byte, error) {
	var body []byte
	err := retry(ctx, o, "downloading "+url, func() error {
		b, err := get(ctx, o.HTTPClient, url)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		if got := hex.EncodeToString(sum[:]); got != strings.ToLower(want) {
			return permanentError{fmt.Errorf("refusing %s: SHA-256 %s, pinned %s (GMSA_VERSION %s)", url, got, want, o.Version)}
		}
		body = b
		return nil
	})
	return body, err
}

func get(ctx context.Context, c *http.Client, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, permanentError{err}
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFile+1))
	if err == nil && len(b) > maxFile {
		err = permanentError{fmt.Errorf("GET %s: larger than %d bytes", url, maxFile)}
	}
	return b, err
}
