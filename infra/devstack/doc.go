// Package devstack runs local servers (PostgreSQL) as child processes for
// development and tests.
//
// Guarantees:
//
//   - A server started by StartPostgres is a direct child process in its own
//     process group. Stop ends the whole group and waits for it. On Linux the
//     server also receives SIGINT (fast shutdown) when the OS thread that
//     started it dies, so it does not outlive a crashed or killed caller.
//   - StartPostgres returns only once the server accepts connections, or
//     returns an error that carries the tail of the server log.
//   - A data directory can be reused across starts; data survives Stop. After
//     an unclean stop (the server was killed) the next start clears a stale
//     postmaster.pid and leftover server processes and runs crash recovery;
//     as synchronous_commit is off, commits of the last second may be lost.
//   - Missing PostgreSQL binaries yield an error matching ErrPostgresMissing.
//   - StartApacheKafka runs a real Apache Kafka cluster (1 or 3 combined KRaft
//     controller+broker JVMs) from jars that Maven resolves once into a cache
//     outside the repository. Each JVM is a child in its own process group
//     that gets SIGKILL when the starting OS thread dies; Close leaves no
//     process behind. Missing tools match ErrJavaMissing / ErrMavenMissing.
//
// Running as root: PostgreSQL refuses to run as root, so initdb and postgres
// run as the "postgres" system user, the data root is chowned to that user,
// and every ancestor directory that user cannot traverse gets o+x (search
// only, not read) so that, e.g., a 0700 t.TempDir() under /tmp works. Nothing
// else outside the data root is changed.
//
// The server is tuned for throwaway data: fsync, synchronous_commit and
// full_page_writes are off, so a machine crash can corrupt the data directory.
// Never point it at data you need.
package devstack
