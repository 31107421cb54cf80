/*
Copyright The capwin Authors.

Licensed under the Apache License, Version 2.0.
*/

// Command cert-manager-webhook is cert-manager's admission webhook (validation
// and mutation of cert-manager resources), built for capwin's e2e images from
// the github.com/cert-manager/cert-manager root module. The flags are the
// upstream ones (pkg/webhook/options); the server is upstream's
// internal/webhook.NewCertManagerWebhookServer.
package main

import (
	"context"

	logsapi "k8s.io/component-base/logs/api/v1"

	config "github.com/cert-manager/cert-manager/internal/apis/config/webhook"
	"github.com/cert-manager/cert-manager/internal/apis/config/webhook/validation"
	cmwebhook "github.com/cert-manager/cert-manager/internal/webhook"
	logf "github.com/cert-manager/cert-manager/pkg/logs"
	"github.com/cert-manager/cert-manager/pkg/webhook/configfile"
	"github.com/cert-manager/cert-manager/pkg/webhook/options"

	"github.com/cert-manager/cert-manager/cmd/capwin-e2e/internal/cli"
)

func main() {
	cli.Main(cli.Component[config.WebhookConfiguration]{
		Name:        "webhook",
		Description: "cert-manager webhook: validates and mutates cert-manager API resources over TLS.",
		Defaults:    options.NewWebhookConfiguration,
		BindFlags:   options.AddConfigFlags,
		LoadFile: func(path string) (*config.WebhookConfiguration, error) {
			f := configfile.New()
			if err := cli.LoadConfigFile(path, f); err != nil {
				return nil, err
			}
			return f.Config, nil
		},
		FeatureGates: func(c *config.WebhookConfiguration) map[string]bool { return c.FeatureGates },
		Logging:      func(c *config.WebhookConfiguration) *logsapi.LoggingConfiguration { return &c.Logging },
		Validate: func(c *config.WebhookConfiguration) error {
			return validation.ValidateWebhookConfiguration(c, nil).ToAggregate()
		},
		Run: func(ctx context.Context, c *config.WebhookConfiguration) error {
			srv, err := cmwebhook.NewCertManagerWebhookServer(logf.FromContext(ctx), *c)
			if err != nil {
				return err
			}
			return srv.Run(ctx)
		},
	})
}
