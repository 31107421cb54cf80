package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/capwin/capwin/bootstrap/pkg/imagecheck"
)

const imageCheckUsage = "usage: render image-check [--kubeconfig FILE] [-n NAMESPACE] --machine-template NAME [--image TEMPLATE|PARENT_DISK] [--kubernetes-version VERSION] [--timeout DURATION] CLUSTER"

// imageCheckFlags defines the flags of render image-check.
func imageCheckFlags(kubeconfig, namespace *string, o *imagecheck.Options) *flag.FlagSet {
	fs := flag.NewFlagSet("render image-check", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	managementFlags(fs, kubeconfig, namespace, "Cluster")
	fs.StringVar(&o.MachineTemplate, "machine-template", "", "a VCenterMachineTemplate or HyperVMachineTemplate of the namespace: the check's machine is made from its spec (required)")
	fs.StringVar(&o.Image, "image", "", "the image to check: a vCenter template, or a Hyper-V parent disk path (default: the machine template's)")
	fs.StringVar(&o.KubernetesVersion, "kubernetes-version", "", "the kubelet.exe version the image must carry, e.g. v1.36.3 (default: not compared)")
	fs.DurationVar(&o.Timeout, "timeout", 30*time.Minute, "how long to wait for the guest's report")
	return fs
}

// printImageCheckUsage writes the usage of render image-check.
func printImageCheckUsage(w io.Writer) error {
	var s string
	var o imagecheck.Options
	return writeUsage(w, imageCheckUsage, `
Checks a Windows image before the first rollout: makes one machine of CLUSTER from the image as
capwin makes every node (a Machine and its VCenterMachine or HyperVMachine, copied from
--machine-template), but the machine runs a small check instead of a bootstrap and joins
nothing. The check lists what the image has for a node (Windows build, cloudbase-init and its
metadata service, the Containers feature, containerd, kubelet.exe and kubeadm.exe, VMware Tools,
free space, the time service), reports it through the bootstrap's status channel, and render
prints it. Then the Machine is deleted, and with it the VM. Exits 1 when the image lacks
something (docs/images.md).`, imageCheckFlags(&s, &s, &o))
}

// runImageCheck runs the image check of CLUSTER's machine template.
func runImageCheck(args []string, stdout io.Writer) error {
	var kubeconfig, namespace string
	var o imagecheck.Options
	fs := imageCheckFlags(&kubeconfig, &namespace, &o)
	if err := fs.Parse(args); err != nil {
		return flagError(err, stdout, printImageCheckUsage, "render image-check -h")
	}
	o.Cluster = fs.Arg(0)
	if err := fs.Parse(fs.Args()[min(1, fs.NArg()):]); err != nil { // flags after the cluster
		return flagError(err, stdout, printImageCheckUsage, "render image-check -h")
	}
	if o.Cluster == "" || fs.NArg() > 0 || o.MachineTemplate == "" {
		return errors.New(imageCheckUsage + " (render image-check -h for the flags)")
	}
	c, namespace, err := management(kubeconfig, namespace)
	if err != nil {
		return err
	}
	o.Namespace = namespace
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt)
	defer cancel()
	if _, err := fmt.Fprintf(stdout, "Checking the image of %s/%s (machine template %s)...\n", namespace, o.Cluster, o.MachineTemplate); err != nil {
		return err
	}
	res, err := imagecheck.Run(ctx, c, o)
	if err != nil {
		return err
	}
	return writeImageCheck(stdout, res)
}

// errImageLacks is render image-check's error for an image that lacks something.
var errImageLacks = errors.New("the image lacks what a capwin node needs")

func writeImageCheck(w io.Writer, res *imagecheck.Result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "\n%s %s (image %s), deleted again\n", res.Kind, res.Machine, res.Image)
	for _, kv := range res.Inventory {
		fmt.Fprintf(&b, "  %-18s %s\n", kv[0], kv[1])
	}
	fmt.Fprintf(&b, "\n%s\n", res.Message)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return err
	}
	if !res.Succeeded {
		return errImageLacks
	}
	return nil
}
