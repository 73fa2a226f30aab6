package cluster

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	docker "github.com/moby/moby/client"
)

// LocalImage is the tag BuildImage gives the local image (make
// docker-image): redis-server from this machine, FROM scratch.
const LocalImage = "lockbench/redis:local"

// ldLib matches the library paths in ldd's output: "libc.so.6 =>
// /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and "/lib64/ld-linux-x86-64.so.2
// (0x...)".
var ldLib = regexp.MustCompile(`(?m)(?:=>\s*)?(/\S+)\s+\(0x[0-9a-f]+\)`)

// BuildImage builds tag (LocalImage when "") FROM scratch with this
// machine's redis-server as /usr/bin/redis-server (a Sentinel is
// redis-server --sentinel) and the shared libraries ldd lists for it, and
// WORKDIR /data. It never pulls: FROM scratch needs no registry. If tag
// is already on the machine and force is false it does nothing. The
// binary is resolved through symlinks (Debian's redis-server links to
// redis-check-rdb) but copied under the name redis-server, which selects
// its mode. Errors caused by the machine (no Docker, no redis-server, no
// ldd) wrap ErrEnvironment.
func BuildImage(ctx context.Context, tag string, force bool) error {
	if tag == "" {
		tag = LocalImage
	}
	cli, err := dockerClient(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	if !force {
		if _, err := cli.ImageInspect(ctx, tag); err == nil {
			return nil
		}
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("%w: cluster: build image %s: redis-server not found on PATH; %s", ErrEnvironment, tag, installHint)
	}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return fmt.Errorf("%w: cluster: build image %s: %v", ErrEnvironment, tag, err)
	}
	out, err := exec.CommandContext(ctx, "ldd", real).Output()
	if err != nil {
		return fmt.Errorf("%w: cluster: build image %s: ldd %s: %v (install it: apt-get install libc-bin)", ErrEnvironment, tag, real, err)
	}
	files := map[string]string{"usr/bin/redis-server": real} // path in image → host path
	for _, m := range ldLib.FindAllStringSubmatch(string(out), -1) {
		files[strings.TrimPrefix(m[1], "/")] = m[1]
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	df := "FROM scratch\n"
	names := make([]string, 0, len(files))
	for k := range files {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, in := range names {
		b, err := os.ReadFile(files[in]) // follows symlinks
		if err != nil {
			return fmt.Errorf("%w: cluster: build image %s: %v", ErrEnvironment, tag, err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: "root/" + in, Mode: 0o755, Size: int64(len(b))}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	df += "COPY root/ /\nWORKDIR /data\nEXPOSE 6379\nCMD [\"redis-server\", \"--protected-mode\", \"no\"]\n"
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df))}); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, df); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	res, err := cli.ImageBuild(ctx, &buf, docker.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true,
		Labels: map[string]string{"org.lockbench.source": real}})
	if err != nil {
		return fmt.Errorf("%w: cluster: build image %s: %v", ErrEnvironment, tag, firstLine(err))
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(res.Body)
	if bytes.Contains(msg, []byte(`"error"`)) {
		return fmt.Errorf("%w: cluster: build image %s: %s", ErrEnvironment, tag, bytes.TrimSpace(msg))
	}
	if _, err := cli.ImageInspect(ctx, tag); err != nil {
		return fmt.Errorf("%w: cluster: build image %s: not there after the build: %s", ErrEnvironment, tag, bytes.TrimSpace(msg))
	}
	return nil
}
