import Foundation
import RelayTestSupport
import RelayTestTags
import Testing

/// `rhea-relay serve` with the shared store configured: a store it cannot use stops it with exit
/// code 2 and a message that names STORE_URL and masks the password; one it can use (here named by
/// STORE_URL_FILE) serves, and says so without the password.
@Suite("rhea-relay serve with STORE_URL", .serialized, .tags(.peers))
struct ServeStoreURLTests {
    /// The password of the URLs that point nowhere.
    static let password = "s3cret-pw"
    /// A configured backend, so that the store is what these tests reach (it is not called).
    static let backend = "http://127.0.0.1:9"

    @Test func anUnreachableStoreExitsTwoNamingSTORE_URLWithThePasswordMasked() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let (port, out) = try await withRefusingLoopbackPort { port in
            let out = try await cli.run(
                ["serve"],
                environment: [
                    "STORE_URL": "postgres://relay:\(Self.password)@127.0.0.1:\(port)/relay?sslmode=disable", "HTTP_PORT": "0", "TRIBUNAL_URL": Self.backend,
                ],
                timeout: 30)
            return (port, out)
        }
        #expect(out.status == 2, "\(out.stderr)")
        #expect(out.stderr.contains("STORE_URL"), "\(out.stderr)")
        #expect(out.stderr.contains("postgres://relay:•••@127.0.0.1:\(port)/relay"), "\(out.stderr)")
        #expect(!out.stderr.contains(Self.password))
        #expect(!out.stdout.contains(Self.password))
    }

    @Test func aWrongPasswordExitsTwoWithoutShowingAnyPassword() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let server = try await PostgresTestServer.shared()
        try await server.withDatabase { database in
            let wrong = "wrong-" + UUID().uuidString
            let url = "postgres://\(server.user):\(wrong)@\(server.host):\(server.port)/\(database.name)?sslmode=disable"
            let out = try await cli.run(["serve"], environment: ["STORE_URL": url, "HTTP_PORT": "0", "TRIBUNAL_URL": Self.backend], timeout: 30)
            #expect(out.status == 2, "\(out.stderr)")
            #expect(out.stderr.contains("STORE_URL"), "\(out.stderr)")
            #expect(out.stderr.contains("password authentication failed"), "\(out.stderr)")
            #expect(!out.stderr.contains(wrong))
            #expect(!out.stderr.contains(server.password))
        }
    }

    @Test func aMalformedURLExitsTwoSayingWhatIsWrong() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let out = try await cli.run(
            ["serve"], environment: ["STORE_URL": "postgres://relay:\(Self.password)@db.example:5432", "HTTP_PORT": "0", "TRIBUNAL_URL": Self.backend])
        #expect(out.status == 2, "\(out.stderr)")
        #expect(out.stderr.contains("store.url (STORE_URL)"), "\(out.stderr)")
        #expect(out.stderr.contains("names no database"), "\(out.stderr)")
        #expect(!out.stderr.contains(Self.password))
    }

    @Test func aURLInTheFileSTORE_URL_FILENamesServesAndIsShownMasked() async throws {
        let server = try await PostgresTestServer.shared()
        try await server.withDatabase { database in
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-serve-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let file = directory.appendingPathComponent("store-url")
            // As a secret is mounted: the URL and a line break, readable by its owner alone.
            try Data((database.url + "\n").utf8).write(to: file)
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: file.path)

            let serve = try await ServeProcess(
                environment: [
                    "STORE_URL_FILE": file.path, "STORE_PATH": directory.appendingPathComponent("relay.sqlite").path,
                    "TRIBUNAL_URL": "http://127.0.0.1:9",
                ],
                directory: directory)
            let ready = try await serve.get("/readyz")
            let said = await serve.stop()

            #expect(ready.status == 200, "\(ready.body)\n\(said)")
            #expect(serve.process.terminationStatus == 0, "\(said)")
            #expect(said.contains("serving on http://"), "\(said)")
            let masked = "(store: postgres://\(server.user):•••@\(server.host):\(server.port)/\(database.name)?sslmode=disable)"
            #expect(said.contains(masked), "\(said)")
            #expect(!said.contains(server.password))
            // The relay migrated the database: it was the store it served from.
            let versions = try await server.queryStrings("SELECT count(*)::text FROM schema_migrations", database: database.name)
            #expect(versions != [["0"]])
        }
    }
}
