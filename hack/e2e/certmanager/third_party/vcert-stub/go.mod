// A stand-in for github.com/Venafi/vcert/v5, whose v5.13.x releases (the
// versions cert-manager v1.21.2 needs) are not served by the Go module proxy
// reachable from capwin's build machines. It declares only the API that
// cert-manager's Venafi issuer compiles against; every operation fails with
// ErrUnavailable. See ../../README.md.
module github.com/Venafi/vcert/v5

go 1.22
