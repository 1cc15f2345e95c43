package devstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"text/template"
	"time"

	"go.uber.org/zap"
)

// ErrJavaMissing matches (errors.Is) the error StartApacheKafka returns when
// no java executable is found.
var ErrJavaMissing = errors.New("java not found: Apache Kafka needs Java 17 or newer; install it with: apt-get install -y openjdk-17-jre-headless")

// ErrMavenMissing matches (errors.Is) the error StartApacheKafka returns when
// the broker's jars are not cached yet and no mvn executable is found.
var ErrMavenMissing = errors.New("mvn not found: it resolves the Apache Kafka jars once; install it with: apt-get install -y maven")

// ErrKafkaJarsUnresolved matches (errors.Is) the error StartApacheKafka
// returns when Maven could not resolve the broker's jars; the error carries
// Maven's last lines.
var ErrKafkaJarsUnresolved = errors.New("maven could not resolve the Apache Kafka jars")

// kafkaPom is the project whose runtime dependencies are the broker's
// classpath. Kafka logs through SLF4J 2; without a provider it is silent, so
// log4j's is added, and slf4j-api 2 is named because Kafka's own dependency
// tree would otherwise pick 1.7, which finds no SLF4J 2 provider. The plugin
// version is pinned for a reproducible resolution (it is Maven 3.8's default).
var kafkaPom = template.Must(template.New("pom").Parse(`<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>xbot.devstack</groupId>
  <artifactId>kafka-broker-runtime</artifactId>
  <version>{{.Kafka}}</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka_2.13</artifactId><version>{{.Kafka}}</version></dependency>
    <dependency><groupId>org.slf4j</groupId><artifactId>slf4j-api</artifactId><version>2.0.17</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-slf4j2-impl</artifactId><version>2.25.2</version></dependency>
    <dependency><groupId>org.apache.logging.log4j</groupId><artifactId>log4j-core</artifactId><version>2.25.2</version></dependency>
  </dependencies>
  <build><plugins><plugin>
    <groupId>org.apache.maven.plugins</groupId><artifactId>maven-dependency-plugin</artifactId><version>2.8</version>
  </plugin></plugins></build>
</project>
`))

// mavenTimeout bounds one resolution: ~10 s with a warm ~/.m2, about a
// minute to download the ~45 MB from Maven Central on a slow link.
const mavenTimeout = 10 * time.Minute

// findTools returns the java executable and, when jarsDir holds no broker
// jar, the mvn executable; both missing is one error naming both.
func findTools(cfg ApacheKafkaConfig) (java, mvn string, err error) {
	var errs []error
	if java, err = lookTool(cfg.Java, "java"); err != nil {
		errs = append(errs, fmt.Errorf("%w (%w)", ErrJavaMissing, err))
	}
	if !hasKafkaJars(cfg.JarsDir, cfg.Version) {
		if mvn, err = lookTool(cfg.Maven, "mvn"); err != nil {
			errs = append(errs, fmt.Errorf("%w (%w)", ErrMavenMissing, err))
		}
	}
	return java, mvn, errors.Join(errs...)
}

// lookTool returns configured, or name found on $PATH.
func lookTool(configured, name string) (string, error) {
	if configured != "" {
		name = configured
	}
	return exec.LookPath(name)
}

// hasKafkaJars reports whether dir holds the broker jar of version.
func hasKafkaJars(dir, version string) bool {
	st, err := os.Stat(filepath.Join(dir, "kafka_2.13-"+version+".jar"))
	return err == nil && st.Mode().IsRegular()
}

// resolveJars fills cfg.JarsDir with the broker's runtime classpath unless it
// holds it already. Maven works in a scratch directory beside JarsDir that is
// renamed into place at the end, so a failed or concurrent run never leaves a
// half-filled JarsDir.
func resolveJars(ctx context.Context, cfg ApacheKafkaConfig, mvn string) error {
	if hasKafkaJars(cfg.JarsDir, cfg.Version) {
		return nil
	}
	parent := filepath.Dir(cfg.JarsDir)
	if err := os.MkdirAll(parent, 0o755); err != nil { //nolint:gosec // a cache of public jars
		return fmt.Errorf("create jar cache %s: %w", parent, err)
	}
	scratch, err := os.MkdirTemp(parent, ".resolve-")
	if err != nil {
		return fmt.Errorf("create jar cache scratch dir: %w", err)
	}
	defer func() { _ = os.RemoveAll(scratch) }() // after the rename it is only the pom and Maven's log
	started := time.Now()
	if err := runMaven(ctx, cfg.Version, mvn, scratch); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(scratch, "libs"), cfg.JarsDir); err != nil && !hasKafkaJars(cfg.JarsDir, cfg.Version) {
		return fmt.Errorf("move resolved jars to %s: %w", cfg.JarsDir, err)
	}
	cfg.Logger.Info("devstack: kafka jars resolved", zap.String("version", cfg.Version),
		zap.String("dir", cfg.JarsDir), zap.Duration("took", time.Since(started)))
	return nil
}

// runMaven writes the pom into dir and copies its runtime dependencies to
// dir/libs.
func runMaven(ctx context.Context, version, mvn, dir string) error {
	var pom bytes.Buffer
	if err := kafkaPom.Execute(&pom, struct{ Kafka string }{version}); err != nil {
		return fmt.Errorf("render kafka pom: %w", err)
	}
	pomPath := filepath.Join(dir, "pom.xml")
	if err := os.WriteFile(pomPath, pom.Bytes(), 0o600); err != nil {
		return fmt.Errorf("write kafka pom: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, mavenTimeout)
	defer cancel()
	args := []string{"-B", "-ntp", "-f", pomPath, "dependency:copy-dependencies",
		"-DoutputDirectory=" + filepath.Join(dir, "libs"), "-DincludeScope=runtime"}
	var out bytes.Buffer
	cmd := exec.CommandContext(ctx, mvn, args...) //nolint:gosec // mvn is found on $PATH or configured, the args are ours
	cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &out
	cmd.SysProcAttr = sysProcAttrKillOnParentDeath()
	if err := runLocked(cmd); err != nil {
		return fmt.Errorf("%w: %s %s: %w\n--- last lines of Maven's output ---\n%s",
			ErrKafkaJarsUnresolved, mvn, strings.Join(args, " "), err, tail(out.Bytes(), tailLines))
	}
	return nil
}
