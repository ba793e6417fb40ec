package deploy

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// imageConfig is the part of an OCI image config that says how it runs.
type imageConfig struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Config       struct {
		User       string   `json:"User"`
		Entrypoint []string `json:"Entrypoint"`
	} `json:"config"`
}

// TestImage builds the image as scripts/image.sh does, with ko into a
// registry on loopback, on an empty base: everything checked below comes
// from hubprobe's build, nothing from a base image.
func TestImage(t *testing.T) {
	t.Parallel()
	crane, ko := goTool(t, "crane"), goTool(t, "ko")
	registry := startRegistry(t, crane)
	const version = "v0.0.0-image-test"
	ref := buildImage(t, ko, registry, pushEmptyBase(t, crane, registry), version)
	var cfg imageConfig
	if err := json.Unmarshal(run(t, nil, crane, "config", ref), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("image is for %s/%s, built for linux/%s", cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	t.Run("runs as a numeric non-root user", func(t *testing.T) {
		uid, gid, _ := strings.Cut(cfg.Config.User, ":")
		if n, err := strconv.ParseUint(uid, 10, 32); err != nil || n == 0 {
			t.Errorf("user %q: want a numeric UID other than 0", cfg.Config.User)
		}
		if _, err := strconv.ParseUint(gid, 10, 32); gid != "" && err != nil {
			t.Errorf("user %q: the group is not numeric", cfg.Config.User)
		}
	})
	t.Run("entrypoint is hubprobe", func(t *testing.T) {
		if len(cfg.Config.Entrypoint) != 1 || path.Base(cfg.Config.Entrypoint[0]) != "hubprobe" {
			t.Errorf("entrypoint = %q, want hubprobe alone", cfg.Config.Entrypoint)
		}
	})
	t.Run("binary is static and answers --version", func(t *testing.T) {
		if len(cfg.Config.Entrypoint) == 0 {
			t.Fatal("no entrypoint")
		}
		bin := extract(t, crane, ref, cfg.Config.Entrypoint[0])
		checkStatic(t, bin)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
		if want := "hubprobe " + version + " ("; err != nil || !strings.HasPrefix(string(out), want) {
			t.Errorf("hubprobe --version = %q, %v; want it to start %q", out, err, want)
		}
	})
	t.Run("Dockerfile runs the same user and entrypoint", func(t *testing.T) {
		d := readDockerfile(t)
		if d.user != cfg.Config.User || !reflect.DeepEqual(d.entrypoint, cfg.Config.Entrypoint) {
			t.Errorf("Dockerfile: USER %q, ENTRYPOINT %q; ko image: user %q, entrypoint %q",
				d.user, d.entrypoint, cfg.Config.User, cfg.Config.Entrypoint)
		}
	})
}

// startRegistry serves an in-memory registry on a free loopback port for the
// length of the test and returns its host:port.
func startRegistry(t *testing.T, crane string) string {
	t.Helper()
	cmd := exec.Command(crane, "registry", "serve", "--address", "127.0.0.1:0")
	var log lockedBuffer
	cmd.Stderr = &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	serving := regexp.MustCompile(`serving on port (\d+)`)
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if m := serving.FindStringSubmatch(log.String()); m != nil {
			return "127.0.0.1:" + m[1]
		}
	}
	t.Fatalf("crane registry serve did not say its port within 30s:\n%s", log.String())
	return ""
}

// pushEmptyBase pushes an image of one empty layer for this machine's
// platform and returns its reference.
func pushEmptyBase(t *testing.T, crane, registry string) string {
	t.Helper()
	layer := filepath.Join(t.TempDir(), "empty.tar")
	f, err := os.Create(layer)
	if err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(tar.NewWriter(f).Close(), f.Close()); err != nil {
		t.Fatal(err)
	}
	ref := registry + "/base:empty"
	run(t, nil, crane, "append", "--new_layer", layer, "--new_tag", ref)
	run(t, nil, crane, "mutate", "--set-platform", "linux/"+runtime.GOARCH, "--tag", ref, ref)
	return ref
}

// buildImage runs scripts/image.sh with ko's base replaced by baseRef and
// returns the pushed image's reference by digest.
func buildImage(t *testing.T, ko, registry, baseRef, version string) string {
	t.Helper()
	env := []string{
		"KO_DOCKER_REPO=" + registry + "/hubprobe",
		"KO_DEFAULTBASEIMAGE=" + baseRef,
		"VERSION=" + version,
		"PATH=" + filepath.Dir(ko) + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
	out := strings.Fields(string(run(t, env, "bash", "../scripts/image.sh", "--sbom=none", "--platform=linux/"+runtime.GOARCH)))
	if len(out) == 0 || !strings.HasPrefix(out[len(out)-1], registry+"/hubprobe@sha256:") {
		t.Fatalf("scripts/image.sh printed %q, want the image reference", out)
	}
	return out[len(out)-1]
}

// extract writes the image's file at name into a temporary directory and
// returns its path there; the file must be executable by any user.
func extract(t *testing.T, crane, ref, name string) string {
	t.Helper()
	fs := filepath.Join(t.TempDir(), "fs.tar")
	run(t, nil, crane, "export", ref, fs)
	f, err := os.Open(fs)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr := tar.NewReader(bufio.NewReader(f))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			t.Fatalf("the image has no %s", name)
		}
		if err != nil {
			t.Fatal(err)
		}
		if strings.TrimPrefix(hdr.Name, "/") != strings.TrimPrefix(name, "/") {
			continue
		}
		if hdr.Typeflag != tar.TypeReg || hdr.Mode&0o001 == 0 {
			t.Errorf("%s is %c with mode %o: a non-root user cannot run it", name, hdr.Typeflag, hdr.Mode)
		}
		return writeExecutable(t, tr)
	}
}

func writeExecutable(t *testing.T, r io.Reader) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "hubprobe")
	f, err := os.OpenFile(out, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	_, err = io.Copy(f, r)
	if err := errors.Join(err, f.Close()); err != nil {
		t.Fatal(err)
	}
	return out
}

// checkStatic fails unless bin is an ELF executable that needs no dynamic
// loader and no shared library: the base image has neither.
func checkStatic(t *testing.T, bin string) {
	t.Helper()
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatalf("hubprobe is not an ELF binary: %v", err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("hubprobe has a %s program header: it is dynamically linked", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) != 0 {
		t.Errorf("hubprobe needs shared libraries %v (%v)", libs, err)
	}
}

// dockerImage is what the Dockerfile's final stage says about the image.
type dockerImage struct {
	base       string
	user       string
	entrypoint []string
}

// readDockerfile reads the final stage of the Dockerfile; ENTRYPOINT must be
// in exec form, as ko writes it.
func readDockerfile(t *testing.T) dockerImage {
	t.Helper()
	data, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var d dockerImage
	for _, line := range strings.Split(string(data), "\n") {
		instruction, args, _ := strings.Cut(strings.TrimSpace(line), " ")
		args = strings.TrimSpace(args)
		switch strings.ToUpper(instruction) {
		case "FROM":
			image, _, _ := strings.Cut(args, " ")
			d = dockerImage{base: image}
		case "USER":
			d.user = args
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(args), &d.entrypoint); err != nil {
				t.Fatalf("Dockerfile ENTRYPOINT %s is not in exec form: %v", args, err)
			}
		}
	}
	return d
}

// Both images start from the same base, so that they carry the same
// certificates and time zones.
func TestDockerfileAndKoShareTheBase(t *testing.T) {
	var ko struct {
		DefaultBaseImage string `json:"defaultBaseImage"`
	}
	readYAML(t, "../.ko.yaml", &ko)
	if d := readDockerfile(t); ko.DefaultBaseImage == "" || d.base != ko.DefaultBaseImage {
		t.Errorf("the Dockerfile's final stage is FROM %q, .ko.yaml's defaultBaseImage is %q", d.base, ko.DefaultBaseImage)
	}
}

// lockedBuffer collects a process's output while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
