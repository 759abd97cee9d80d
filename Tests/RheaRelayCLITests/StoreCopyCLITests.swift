import Foundation
import RelayTestSupport
import RelayTestTags
import Testing

/// `rhea-relay store copy` as an operator runs it: what the relay kept in its SQLite file, it then
/// reads from PostgreSQL; a target with data, a missing file or no target is refused with exit 2.
@Suite("rhea-relay store copy", .serialized, .tags(.peers))
struct StoreCopyCLITests {
    @Test func whatTheSQLiteStoreKeptTheRelayReadsFromPostgreSQLAfterTheCopy() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        try await withFakeRheaTribunal { fake in
            let environment = ["TRIBUNAL_URL": fake.url, "TRIBUNAL_API_KEY": FakeRheaTribunal.defaultAPIKey]
            for line in ["/chain save polish = input > grammar > output", "/tribunal The sky is blue", "/translate fr Good morning"] {
                let out = try await cli.run(["run", line, "--team", "acme"], environment: environment)
                #expect(out.status == 0, "\(line): \(out.stdout)\(out.stderr)")
            }
            let chains = try await cli.run(["chains", "export", "--team", "acme"], environment: environment)
            let ledger = try await cli.run(["ledger", "export", "--team", "acme"], environment: environment)
            #expect(chains.stdout.contains("polish = "))
            #expect(ledger.stdout.contains("The sky is blue"))

            let server = try await PostgresTestServer.shared()
            try await server.withDatabase { database in
                let from = "sqlite:" + cli.directory.appendingPathComponent("relay.sqlite").path
                // The target from STORE_URL, as a deployment passes it.
                let copy = try await cli.run(["store", "copy", "--from", from], environment: ["STORE_URL": database.url])
                #expect(copy.status == 0, "\(copy.stdout)\(copy.stderr)")
                #expect(copy.stdout.contains("into postgres://\(server.user):•••@"), "\(copy.stdout)")
                for table in ["  chains: 1\n", "  custom_commands: 0\n", "  ledger: 1\n", "  outbox: 0\n", "  inbox: 0\n"] {
                    #expect(copy.stdout.contains(table), "\(copy.stdout)")
                }
                #expect(!copy.stdout.contains(server.password) && !copy.stderr.contains(server.password))

                let shared = environment.merging(["STORE_URL": database.url]) { $1 }
                #expect(try await cli.run(["chains", "export", "--team", "acme"], environment: shared).stdout == chains.stdout)
                #expect(try await cli.run(["ledger", "export", "--team", "acme"], environment: shared).stdout == ledger.stdout)

                // Again, into what now holds the copy: refused, and the target keeps one copy.
                let again = try await cli.run(["store", "copy", "--from", from, "--to", database.url])
                #expect(again.status == 2, "\(again.stdout)\(again.stderr)")
                #expect(again.stderr.contains("already holds data (in chains, "), "\(again.stderr)")
                #expect(again.stderr.contains("nothing was copied"), "\(again.stderr)")
                #expect(!again.stderr.contains(server.password))
                let kept = try await server.queryStrings("SELECT count(*)::text FROM chains", database: database.name)
                #expect(kept == [["1"]])
            }
        }
    }

    @Test func aMissingSourceANonSQLiteSourceAndNoTargetExitTwo() async throws {
        let cli = try CLIProcess()
        defer { cli.cleanup() }
        let server = try await PostgresTestServer.shared()
        try await server.withDatabase { database in
            let missing = try await cli.run(["store", "copy", "--from", "sqlite:/nonexistent/relay.sqlite", "--to", database.url])
            #expect(missing.status == 2)
            #expect(missing.stderr.contains("There is no SQLite store at /nonexistent/relay.sqlite"), "\(missing.stderr)")
            #expect(!FileManager.default.fileExists(atPath: "/nonexistent/relay.sqlite"))

            let plain = try await cli.run(["store", "copy", "--from", "relay.sqlite", "--to", database.url])
            #expect(plain.status == 2)
            #expect(plain.stderr.contains("--from must be sqlite:PATH"), "\(plain.stderr)")

            let malformed = try await cli.run(["store", "copy", "--from", "sqlite:relay.sqlite", "--to", "postgres://relay:s3cret@db.example"])
            #expect(malformed.status == 2)
            #expect(malformed.stderr.contains("names no database"), "\(malformed.stderr)")
            #expect(!malformed.stderr.contains("s3cret"))
        }
        let nowhere = try await cli.run(["store", "copy", "--from", "sqlite:relay.sqlite"])
        #expect(nowhere.status == 2)
        #expect(nowhere.stderr.contains("there is no store to copy into"), "\(nowhere.stderr)")
    }
}
