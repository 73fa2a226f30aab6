package dockerd

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"

	docker "github.com/moby/moby/client"

	"github.com/lockbench/lockbench/internal/errs"
)

// initSource is lockbench-init, the local image's PID 1: see
// lockbenchinit/init.c.
//
//go:embed lockbenchinit/init.c
var initSource []byte

// Labels of the local image.
const (
	// InitLabel is "1" when the image's entrypoint is lockbench-init,
	// which lets the docker backend kill and restart redis-server inside a
	// running container.
	InitLabel = "org.lockbench.init"
	// imageVersionLabel identifies the recipe BuildImage used (a hash of
	// the init source and the builder's version); another value rebuilds.
	imageVersionLabel = "org.lockbench.image-version"
	// imageRecipe is bumped when BuildImage's output changes.
	imageRecipe = "2"
)

// imageVersion is the imageVersionLabel value of this build.
func imageVersion() string {
	sum := sha256.Sum256(append([]byte(imageRecipe), initSource...))
	return hex.EncodeToString(sum[:6])
}

// LocalImage is the tag BuildImage gives the local image (make
// docker-image): redis-server from this machine, FROM scratch.
const LocalImage = "lockbench/redis:local"

// installHint is the one-line fix printed when redis-server is missing
// (as cluster prints it).
const installHint = "install it: apt-get install redis-server (or run make bench, which installs it)"

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
// its mode. With gcc on PATH the image's entrypoint is lockbench-init
// (lockbenchinit/init.c, compiled here against the image's libc), which
// keeps the container up while the docker backend kills and restarts
// redis-server in it. A tag built by another version of this recipe is
// rebuilt. Errors caused by the machine (no Docker, no redis-server, no
// ldd) wrap errs.ErrEnvironment.
func BuildImage(ctx context.Context, tag string, force bool) error {
	if tag == "" {
		tag = LocalImage
	}
	cli, err := Client(ctx)
	if err != nil {
		return err
	}
	defer cli.Close()
	// One build at a time on this machine (test packages run in parallel
	// and would each build): the others wait, then find the tag current.
	lock, err := os.OpenFile(filepath.Join(os.TempDir(), "lockbench-image.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("%w: cluster: build image %s: %v", errs.ErrEnvironment, tag, err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return fmt.Errorf("%w: cluster: build image %s: lock: %v", errs.ErrEnvironment, tag, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	old := ""
	if r, err := cli.ImageInspect(ctx, tag); err == nil {
		old = r.ID
		if !force && r.Config != nil && r.Config.Labels[imageVersionLabel] == imageVersion() {
			return nil
		}
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		return fmt.Errorf("%w: cluster: build image %s: redis-server not found on PATH; %s", errs.ErrEnvironment, tag, installHint)
	}
	real, err := filepath.EvalSymlinks(bin)
	if err != nil {
		return fmt.Errorf("%w: cluster: build image %s: %v", errs.ErrEnvironment, tag, err)
	}
	out, err := exec.CommandContext(ctx, "ldd", real).Output()
	if err != nil {
		return fmt.Errorf("%w: cluster: build image %s: ldd %s: %v (install it: apt-get install libc-bin)", errs.ErrEnvironment, tag, real, err)
	}
	files := map[string]string{"usr/bin/redis-server": real} // path in image → host path
	for _, m := range ldLib.FindAllStringSubmatch(string(out), -1) {
		files[strings.TrimPrefix(m[1], "/")] = m[1]
	}
	initBin := ""
	if gcc, err := exec.LookPath("gcc"); err == nil {
		dir, err := os.MkdirTemp("", "lockbench-init-")
		if err != nil {
			return fmt.Errorf("%w: cluster: build image %s: %v", errs.ErrEnvironment, tag, err)
		}
		defer os.RemoveAll(dir)
		initBin = filepath.Join(dir, "lockbench-init")
		cmd := exec.CommandContext(ctx, gcc, "-O2", "-o", initBin, "-x", "c", "-")
		cmd.Stdin = bytes.NewReader(initSource)
		if msg, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("%w: cluster: build image %s: gcc lockbench-init: %v: %s", errs.ErrEnvironment, tag, err, bytes.TrimSpace(msg))
		}
		files["usr/bin/lockbench-init"] = initBin
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
			return fmt.Errorf("%w: cluster: build image %s: %v", errs.ErrEnvironment, tag, err)
		}
		if err := tw.WriteHeader(&tar.Header{Name: "root/" + in, Mode: 0o755, Size: int64(len(b))}); err != nil {
			return err
		}
		if _, err := tw.Write(b); err != nil {
			return err
		}
	}
	df += "COPY root/ /\nWORKDIR /data\nEXPOSE 6379\n"
	labels := map[string]string{"org.lockbench.source": real, imageVersionLabel: imageVersion()}
	if initBin != "" {
		df += "ENTRYPOINT [\"/usr/bin/lockbench-init\"]\n"
		labels[InitLabel] = "1"
	}
	df += "CMD [\"redis-server\", \"--protected-mode\", \"no\"]\n"
	if err := tw.WriteHeader(&tar.Header{Name: "Dockerfile", Mode: 0o644, Size: int64(len(df))}); err != nil {
		return err
	}
	if _, err := io.WriteString(tw, df); err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	res, err := cli.ImageBuild(ctx, &buf, docker.ImageBuildOptions{Tags: []string{tag}, Remove: true, ForceRemove: true, Labels: labels})
	if err != nil {
		return fmt.Errorf("%w: cluster: build image %s: %v", errs.ErrEnvironment, tag, errs.FirstLine(err))
	}
	defer res.Body.Close()
	msg, _ := io.ReadAll(res.Body)
	if bytes.Contains(msg, []byte(`"error"`)) {
		return fmt.Errorf("%w: cluster: build image %s: %s", errs.ErrEnvironment, tag, bytes.TrimSpace(msg))
	}
	r, err := cli.ImageInspect(ctx, tag)
	if err != nil {
		return fmt.Errorf("%w: cluster: build image %s: not there after the build: %s", errs.ErrEnvironment, tag, bytes.TrimSpace(msg))
	}
	if old != "" && old != r.ID {
		// The previous build of the tag is now untagged: remove it (best
		// effort; a container still using it keeps it).
		_, _ = cli.ImageRemove(ctx, old, docker.ImageRemoveOptions{PruneChildren: true})
	}
	return nil
}
