"""Jars from Maven Central, fetched once into the course's cache.

`fetch("kafka-4.4.0", [KAFKA coordinates])` writes a small pom beside the cache folder and
asks Maven for the runtime closure (what Kafka's own distribution ships in libs/). Two
closures are fetched: Kafka's broker and tools (`fetch_kafka`, for `minikafka kafka up`) and
Spark's Kafka connector for the installed pyspark (`fetch_spark`, for `format("kafka")`);
they stay in separate folders, so Kafka's broker jars never reach Spark's classpath. A stamp
file lists what arrived: a second call finds it and fetches nothing, and a half-finished
fetch (no stamp) starts again. Maven keeps its own copy in ~/.m2, so even a wiped cache
refills without the network.

Where the cache is: $MINIKAFKA_CACHE, else `.cache/` in the repository (git ignores it),
else ~/.cache/minikafka for an installed package.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

from . import KAFKA_VERSION, SCALA_VERSION

__all__ = ["FetchError", "artifact_of", "cache_dir", "fetch", "fetch_kafka", "fetch_spark",
           "fetch_tiered_storage", "kafka_libs", "maven_hint", "pyspark_jars", "pyspark_version",
           "spark_libs"]

DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.8.1"
STAMP = ".complete"
# Kafka's distribution logs through SLF4J 1.7 into Log4j 2 with this bridge; the Maven
# artifacts leave the binding out, so it is added here, once, at Log4j's own version.
SLF4J_BINDING = "org.apache.logging.log4j:log4j-slf4j-impl"
OTHER_BINDINGS = ("slf4j-reload4j", "slf4j-log4j12", "slf4j-simple", "logback-classic",
                  "log4j-slf4j2-impl", "slf4j-jdk14")
# Spark's Kafka source: a separate artifact, published for each Spark release (Scala 2.13).
SPARK_KAFKA = f"org.apache.spark:spark-sql-kafka-0-10_{SCALA_VERSION}"
# Kafka's file-system RemoteStorageManager (LocalTieredStorage) ships only in kafka-storage's
# test jar. Maven Central has none for 4.4.0 ("Could not find artifact
# org.apache.kafka:kafka-storage:jar:test:4.4.0 in central", checked 2026-11-29), so the newest
# release that has one follows. Its classes use KIP-405's public RemoteStorageManager API,
# unchanged in 4.4.0, and one internal class 4.4.0 moved, LogContext (to
# org.apache.kafka.common.utils.internals): Maven's shade plugin rewrites that reference.
TIERED_STORAGE_TEST_JARS = (KAFKA_VERSION, "4.3.1")
TIERED_STORAGE_MOVED = {"org.apache.kafka.common.utils.LogContext":
                        "org.apache.kafka.common.utils.internals.LogContext"}
SHADE_PLUGIN = ("org.apache.maven.plugins", "maven-shade-plugin", "3.6.0")
# "<artifact>-<version>.jar", the version starting with digits and a dot.
_JAR = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d+\.\d+[^/]*)\.jar$")


class FetchError(RuntimeError):
    """Maven is missing or could not resolve the jars; the message says what to do."""


def cache_dir() -> Path:
    if env := os.environ.get("MINIKAFKA_CACHE"):
        return Path(env).expanduser()
    repo = Path(__file__).resolve().parents[2]
    if (repo / "pyproject.toml").exists() and (repo / "setup.sh").exists():
        return repo / ".cache"
    return Path.home() / ".cache" / "minikafka"


def kafka_libs(version: str = KAFKA_VERSION) -> Path:
    """Where Kafka's jars are (or will be, after fetch_kafka)."""
    return cache_dir() / f"kafka-{version}" / "libs"


def maven_hint() -> str:
    return ("run ./setup.sh --real-kafka (it installs Maven where it can and fetches Kafka's "
            "jars), or use Docker: docker compose -f docker/compose.yaml up -d")


def fetch_kafka(version: str = KAFKA_VERSION, *, quiet: bool = True) -> Path:
    """Kafka's broker and tools (kafka_2.13, kafka-tools) with their runtime dependencies."""
    libs = fetch(f"kafka-{version}",
                 [f"org.apache.kafka:kafka_{SCALA_VERSION}:{version}",
                  f"org.apache.kafka:kafka-tools:{version}"],
                 quiet=quiet, extra=_slf4j_binding)
    return libs


def fetch_tiered_storage(versions: Sequence[str] = TIERED_STORAGE_TEST_JARS, *,
                         quiet: bool = True) -> Path:
    """LocalTieredStorage and its helper classes from kafka-storage's test jar, as one jar
    with TIERED_STORAGE_MOVED rewritten; the first of `versions` Maven Central serves wins.
    Nothing else comes along: its dependencies are Kafka's own, on the broker's classpath."""
    home = cache_dir() / "kafka-tiered-storage"
    libs = home / "libs"
    if (home / STAMP).exists() and libs.is_dir():
        return libs
    mvn = shutil.which("mvn")
    if mvn is None:
        raise FetchError("Maven (mvn) is not installed, so kafka-storage's test jar cannot be "
                         "fetched: " + maven_hint())
    home.mkdir(parents=True, exist_ok=True)
    failures = []
    for version in versions:
        (home / "pom.xml").write_text(_shaded_test_jar_pom(version))
        try:
            _maven(mvn, home, ["package"], quiet)
        except FetchError as exc:
            failures.append(f"kafka-storage {version}: {exc}")
            continue
        if libs.exists():
            shutil.rmtree(libs)
        libs.mkdir()
        jar = libs / f"kafka-storage-{version}-test-localtieredstorage.jar"
        shutil.copyfile(home / "target" / "kafka-tiered-storage-1.jar", jar)
        (home / STAMP).write_text(jar.name + "\n")
        return libs
    raise FetchError("no kafka-storage test jar (LocalTieredStorage) could be fetched:\n"
                     + "\n".join(failures))


def _shaded_test_jar_pom(version: str) -> str:
    group, artifact, plugin_version = SHADE_PLUGIN
    relocations = "\n".join(
        f"          <relocation><pattern>{old}</pattern><shadedPattern>{new}</shadedPattern>"
        "</relocation>" for old, new in TIERED_STORAGE_MOVED.items())
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>minikafka.cache</groupId>
  <artifactId>kafka-tiered-storage</artifactId>
  <version>1</version>
  <properties><project.build.sourceEncoding>UTF-8</project.build.sourceEncoding></properties>
  <dependencies>
    <dependency><groupId>org.apache.kafka</groupId><artifactId>kafka-storage</artifactId>
      <version>{version}</version><classifier>test</classifier>
      <exclusions><exclusion><groupId>*</groupId><artifactId>*</artifactId></exclusion></exclusions>
    </dependency>
  </dependencies>
  <build><plugins><plugin>
    <groupId>{group}</groupId><artifactId>{artifact}</artifactId><version>{plugin_version}</version>
    <executions><execution><phase>package</phase><goals><goal>shade</goal></goals>
      <configuration>
        <filters><filter><artifact>org.apache.kafka:kafka-storage:test</artifact>
          <includes><include>org/apache/kafka/server/log/remote/storage/**</include></includes>
        </filter></filters>
        <relocations>
{relocations}
        </relocations>
      </configuration></execution></executions>
  </plugin></plugins></build>
</project>
"""


def pyspark_version() -> str:
    """The installed pyspark's version (the connector must be the same release)."""
    from importlib import metadata

    try:
        return metadata.version("pyspark")
    except metadata.PackageNotFoundError:
        raise FetchError("pyspark is not installed, so there is no Spark to fetch the Kafka "
                         "connector for (pip install -e . installs it)") from None


def pyspark_jars() -> Path | None:
    """pyspark's own jars/ folder (Spark's classpath), or None without pyspark."""
    from importlib.util import find_spec

    spec = find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))) / "jars"


def spark_libs(version: str | None = None) -> Path:
    """Where Spark's Kafka connector for pyspark `version` is (or will be, after fetch_spark)."""
    return cache_dir() / f"spark-kafka-{version or pyspark_version()}" / "libs"


def fetch_spark(version: str | None = None, *, quiet: bool = True) -> Path:
    """spark-sql-kafka-0-10 for the installed pyspark with its runtime dependencies
    (spark-token-provider-kafka, kafka-clients, commons-pool2, ...), as `spark-submit
    --packages` resolves it, minus the jars Spark already ships: one copy of each library
    on the classpath, Spark's (and Spark's own logging: no SLF4J binding comes along)."""
    version = version or pyspark_version()
    return fetch(f"spark-kafka-{version}", [f"{SPARK_KAFKA}:{version}"], quiet=quiet,
                 extra=_without_spark_jars)


def artifact_of(jar_name: str) -> str:
    """"kafka-clients-3.9.2.jar" -> "kafka-clients"; "zstd-jni-1.5.7-7.jar" -> "zstd-jni"."""
    match = _JAR.match(jar_name)
    return match["artifact"] if match else jar_name.removesuffix(".jar")


def fetch(name: str, coordinates: Sequence[str], *, quiet: bool = True,
          extra: Callable[[Path, Callable[[Sequence[str]], None]], None] | None = None) -> Path:
    """The runtime closure of `coordinates` (group:artifact:version) in cache/NAME/libs.

    `extra(libs, mvn)` may copy more jars in before the stamp is written.
    """
    home = cache_dir() / name
    libs = home / "libs"
    stamp = home / STAMP
    if stamp.exists() and libs.is_dir():
        return libs
    mvn = shutil.which("mvn")
    if mvn is None:
        raise FetchError(f"Maven (mvn) is not installed, so {name}'s jars cannot be fetched: "
                         + maven_hint())
    home.mkdir(parents=True, exist_ok=True)
    if libs.exists():
        shutil.rmtree(libs)
    (home / "pom.xml").write_text(_pom(name, coordinates))
    _maven(mvn, home, [f"{DEPENDENCY_PLUGIN}:copy-dependencies", "-DincludeScope=runtime",
                       f"-DoutputDirectory={libs}"], quiet)
    if extra is not None:
        extra(libs, lambda args: _maven(mvn, home, args, quiet))
    jars = sorted(p.name for p in libs.glob("*.jar"))
    stamp.write_text("\n".join(jars) + "\n")
    return libs


def _slf4j_binding(libs: Path, maven) -> None:
    others = [p.name for p in libs.glob("*.jar") if p.name.startswith(OTHER_BINDINGS)]
    if others:
        raise FetchError(f"unexpected SLF4J bindings among Kafka's jars: {others}")
    core = sorted(libs.glob("log4j-core-*.jar"))
    if not core:
        raise FetchError("Kafka's jars came without log4j-core; cannot add its SLF4J binding")
    version = core[0].name.removeprefix("log4j-core-").removesuffix(".jar")
    maven([f"{DEPENDENCY_PLUGIN}:copy", f"-Dartifact={SLF4J_BINDING}:{version}",
           f"-DoutputDirectory={libs}"])


def _without_spark_jars(libs: Path, maven) -> None:
    spark = pyspark_jars()
    shipped = {artifact_of(p.name) for p in spark.glob("*.jar")} if spark else set()
    for jar in libs.glob("*.jar"):
        if artifact_of(jar.name) in shipped:
            jar.unlink()
    bindings = [p.name for p in libs.glob("*.jar") if p.name.startswith(OTHER_BINDINGS)]
    if bindings:
        raise FetchError(f"unexpected SLF4J bindings among the connector's jars: {bindings}")


def _maven(mvn: str, home: Path, args: Sequence[str], quiet: bool) -> None:
    cmd = [mvn, "-B", *(["-q"] if quiet else []), *args]
    done = subprocess.run(cmd, cwd=home, capture_output=True, text=True)
    if done.returncode != 0:
        tail = "\n".join((done.stdout + done.stderr).strip().splitlines()[-15:])
        raise FetchError(f"Maven could not fetch the jars ({' '.join(cmd[1:3])} ...):\n{tail}\n"
                         "Is Maven Central reachable from here? Offline, the course still works "
                         "with minikafka; for real Kafka " + maven_hint())


def _pom(name: str, coordinates: Sequence[str]) -> str:
    deps = []
    for coordinate in coordinates:
        group, artifact, version = coordinate.split(":")
        deps.append(f"    <dependency><groupId>{group}</groupId><artifactId>{artifact}"
                    f"</artifactId><version>{version}</version></dependency>")
    body = "\n".join(deps)
    return f"""<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>minikafka.cache</groupId>
  <artifactId>{name}</artifactId>
  <version>1</version>
  <packaging>pom</packaging>
  <dependencies>
{body}
  </dependencies>
</project>
"""
