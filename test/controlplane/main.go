// Command k8s-local is a multi-call binary holding the Kubernetes control-plane
// components planwarden's tests and demo run: one link, one process per component.
package main

import (
	"fmt"
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
	"k8s.io/component-base/cli"
	apiserver "k8s.io/kubernetes/cmd/kube-apiserver/app"
	controllermanager "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	scheduler "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: k8s-local etcd|kube-apiserver|kube-controller-manager|kube-scheduler [flags]")
		os.Exit(2)
	}
	component, args := os.Args[1], os.Args[2:]
	switch component {
	case "etcd":
		etcdmain.Main(append([]string{"etcd"}, args...))
	case "kube-apiserver":
		cmd := apiserver.NewAPIServerCommand()
		cmd.SetArgs(args)
		os.Exit(cli.Run(cmd))
	case "kube-controller-manager":
		cmd := controllermanager.NewControllerManagerCommand()
		cmd.SetArgs(args)
		os.Exit(cli.Run(cmd))
	case "kube-scheduler":
		cmd := scheduler.NewSchedulerCommand()
		cmd.SetArgs(args)
		os.Exit(cli.Run(cmd))
	case "version":
		fmt.Println("k8s-local v1.33.13")
	default:
		fmt.Fprintf(os.Stderr, "k8s-local: unknown component %q\n", component)
		os.Exit(2)
	}
}
