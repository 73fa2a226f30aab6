// Package dockerd is what lockbench does with the Docker daemon outside a
// cluster's life: whether it answers (Client, Available), the images it
// holds or builds (CheckImage, BuildImage, LocalImage, DefaultImage), the
// labels on every object the docker backend makes (Labels, PIDLabel), and
// the sweep of what a dead lockbench left behind (Sweep, Objects). The
// docker backend of cluster runs its containers with it.
package dockerd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	docker "github.com/moby/moby/client"

	"github.com/lockbench/lockbench/internal/errs"
	"github.com/lockbench/lockbench/internal/proc"
)

// DefaultImage is the default Docker image of the docker backend: the
// official Redis 7 image. Machines without registry access build a local
// one instead (BuildImage, make docker-image) and pass LocalImage.
const DefaultImage = "redis:7.4"

// Docker labels on every container and network the docker backend makes;
// the sweep at start and the tests find leftovers by them.
const (
	// LabelBackend marks lockbench's Docker objects (value "docker").
	LabelBackend = "lockbench.backend"
	// LabelCluster names the cluster (a random id per Start).
	LabelCluster = "lockbench.cluster"
	// LabelPID is the process id of the lockbench that made the object; the
	// sweep removes objects whose process is gone.
	LabelPID = "lockbench.pid"
)

// Labels returns the labels of every object the docker backend makes for
// the cluster with the given id: LabelBackend "docker", LabelCluster id,
// and LabelPID this process's id.
func Labels(cluster string) map[string]string {
	return map[string]string{LabelBackend: backendValue, LabelCluster: cluster, LabelPID: strconv.Itoa(os.Getpid())}
}

// backendValue is LabelBackend's value (cluster.BackendDocker).
const backendValue = "docker"

// dockerHint is the fix printed when no Docker daemon answers.
const dockerHint = "start Docker (systemctl start docker, or set DOCKER_HOST), or use --backend process (apt-get install redis-server)"

// sweepTimeout bounds the Docker calls of Sweep (as the docker backend's
// own stop timeout bounds Kill and Stop).
const sweepTimeout = 20 * time.Second

// Client connects to the Docker daemon and pings it (within 5 s); an
// error wraps errs.errs.ErrEnvironment and says how to fix it. The caller
// closes the client.
func Client(ctx context.Context) (*docker.Client, error) {
	cli, err := docker.New(docker.FromEnv)
	if err != nil {
		return nil, fmt.Errorf("%w: cluster: no Docker daemon answers (%v); %s", errs.ErrEnvironment, err, dockerHint)
	}
	pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx, docker.PingOptions{}); err != nil {
		cli.Close()
		return nil, fmt.Errorf("%w: cluster: no Docker daemon answers (%v); %s", errs.ErrEnvironment, errs.FirstLine(err), dockerHint)
	}
	return cli, nil
}

// Available reports whether a Docker daemon answers a ping within
// 5 s, and why not.
func Available(ctx context.Context) error {
	cli, err := Client(ctx)
	if err != nil {
		return err
	}
	return cli.Close()
}

// CheckImage returns nil when the Docker daemon answers and holds image,
// else an error wrapping errs.ErrEnvironment that names the image and how to
// get it (lockbench never pulls). Commands call it before anything starts,
// so a missing image leaves no results folder behind.
func CheckImage(ctx context.Context, image string) error {
	cli, err := Client(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if _, err := cli.ImageInspect(ctx, image); err != nil {
		return ImageMissing(image, err)
	}
	return nil
}

// ImageMissing is the error for an image that is not on the machine,
// from the error err of its inspection: it wraps errs.errs.ErrEnvironment and
// says how to get the image.
func ImageMissing(image string, err error) error {
	return fmt.Errorf("%w: cluster: Docker image %s is not on this machine and lockbench never pulls (%v); %s", errs.ErrEnvironment, image, errs.FirstLine(err), imageHint(image))
}

// imageHint says how to get an image when it is not on the machine.
func imageHint(img string) string {
	return fmt.Sprintf("build the local image with `make docker-image` (tags %s: redis-server from this machine, FROM scratch) and pass --redis-image %s, or load one with `docker load -i redis.tar` / `docker pull %s` where a registry is reachable; or use the process backend: apt-get install redis-server, --backend process", LocalImage, LocalImage, img)
}

// PIDLabel is the Docker label ("key=value") of every object made by
// lockbench process pid.
func PIDLabel(pid int) string { return LabelPID + "=" + strconv.Itoa(pid) }

// Remove force-removes the containers (and their anonymous volumes)
// and then the networks carrying label ("key=value").
func Remove(ctx context.Context, cli *docker.Client, label string) error {
	f := make(docker.Filters).Add("label", label)
	var failed []error
	cs, err := cli.ContainerList(ctx, docker.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return fmt.Errorf("cluster: list containers: %w", err)
	}
	for _, c := range cs.Items {
		if _, err := cli.ContainerRemove(ctx, c.ID, docker.ContainerRemoveOptions{Force: true, RemoveVolumes: true}); err != nil && !strings.Contains(err.Error(), "No such container") {
			failed = append(failed, fmt.Errorf("cluster: remove container %.12s: %v", c.ID, errs.FirstLine(err)))
		}
	}
	ns, err := cli.NetworkList(ctx, docker.NetworkListOptions{Filters: f})
	if err != nil {
		return errors.Join(append(failed, fmt.Errorf("cluster: list networks: %w", err))...)
	}
	for _, nw := range ns.Items {
		if _, err := cli.NetworkRemove(ctx, nw.ID, docker.NetworkRemoveOptions{}); err != nil && !strings.Contains(err.Error(), "not found") {
			failed = append(failed, fmt.Errorf("cluster: remove network %s: %v", nw.Name, errs.FirstLine(err)))
		}
	}
	return errors.Join(failed...)
}

// Sweep removes the containers and networks lockbench made (label
// LabelBackend=docker) whose lockbench process is gone (a lockbench
// killed with SIGKILL runs no Stop), or all of them when all is true. It
// is best effort and returns what it could not remove; it returns nil
// when no Docker daemon answers.
func Sweep(ctx context.Context, all bool) error {
	cli, err := Client(ctx)
	if err != nil {
		return nil
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, sweepTimeout)
	defer cancel()
	f := make(docker.Filters).Add("label", LabelBackend+"="+backendValue)
	pids := map[string]bool{}
	cs, err := cli.ContainerList(ctx, docker.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return err
	}
	for _, c := range cs.Items {
		pids[c.Labels[LabelPID]] = true
	}
	ns, err := cli.NetworkList(ctx, docker.NetworkListOptions{Filters: f})
	if err != nil {
		return err
	}
	for _, nw := range ns.Items {
		pids[nw.Labels[LabelPID]] = true
	}
	var failed []error
	for pid := range pids {
		if p, err := strconv.Atoi(pid); !all && err == nil && proc.Alive(p) {
			continue
		}
		failed = append(failed, Remove(ctx, cli, LabelPID+"="+pid))
	}
	return errors.Join(failed...)
}

// Objects lists the containers and networks carrying label
// ("key=value", e.g. PIDLabel(pid) or Cluster.DockerLabel()), and the
// number of dangling (unattached) Docker volumes on the machine, for tests
// and checks that nothing was left behind. It returns an error when no
// Docker daemon answers.
func Objects(ctx context.Context, label string) (objects []string, danglingVolumes int, err error) {
	cli, err := Client(ctx)
	if err != nil {
		return nil, 0, err
	}
	defer cli.Close()
	f := make(docker.Filters).Add("label", label)
	cs, err := cli.ContainerList(ctx, docker.ContainerListOptions{All: true, Filters: f})
	if err != nil {
		return nil, 0, err
	}
	for _, c := range cs.Items {
		objects = append(objects, "container "+strings.Join(c.Names, ","))
	}
	ns, err := cli.NetworkList(ctx, docker.NetworkListOptions{Filters: f})
	if err != nil {
		return nil, 0, err
	}
	for _, n := range ns.Items {
		objects = append(objects, "network "+n.Name)
	}
	vs, err := cli.VolumeList(ctx, docker.VolumeListOptions{Filters: make(docker.Filters).Add("dangling", "true")})
	if err != nil {
		return nil, 0, err
	}
	return objects, len(vs.Items), nil
}
