import Foundation
import NIOCore
import RelayPipeline
import RelayPlatform
import RelayServer
import RelayTestSupport
import RelayTestTags
import Testing
import Yams

// The binary's own platform list (`chatPlatforms`), so these tests read what the relay they start reads.
@testable import rhea_relay

/// Issue 13, point 5: every probe, port and environment variable named in `deploy/` is checked
/// against what `rhea-relay serve` really serves and reads, so the files cannot drift from the
/// server. The server is the built binary, started with each file's environment; what it read is
/// taken from swift-configuration's own access log (`CONFIG_ACCESS_LOG_FILE`). Issue 24, item 9:
/// the files that run several replicas (compose's `postgres` profile, the Kubernetes `replicas: 3`
/// variant) are started the same way, on a real PostgreSQL.
@Suite("deploy/: the files match the server", .serialized, .tags(.peers))
struct DeployFilesTests {
    static let targets: [DeployTarget] = (try? DeployTarget.all()) ?? []

    @Test func everyFileIsRead() throws {
        let names = try DeployTarget.all().map(\.name)
        #expect(names.count == 9)
        #expect(
            names == [
                "deploy/Dockerfile", "deploy/compose.yaml", "deploy/compose.yaml (relay-1)", "deploy/compose.yaml (relay-2)",
                "deploy/compose.yaml (relay-3)", "deploy/kubernetes/rhea-relay.yaml", "deploy/kubernetes/rhea-relay-replicas.yaml", "deploy/fly.toml",
                "deploy/systemd/rhea-relay.service",
            ])
        // A manifest added to deploy/kubernetes/ cannot go unread.
        let folder = DeployTarget.root.appendingPathComponent("deploy/kubernetes").path
        let manifests = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasSuffix(".yaml") }
        #expect(Set(manifests.map { "deploy/kubernetes/" + $0 }) == Set(DeployTarget.kubernetesFiles))
    }

    @Test(arguments: targets)
    func everyPortIsThePortTheRelayListensOn(_ target: DeployTarget) throws {
        let port = try #require(target.httpPort, "\(target) sets no HTTP_PORT (nor does the image)")
        #expect(!target.ports.isEmpty || !target.inContainer, "\(target) names no port")
        for named in target.ports { #expect(named.number == port, "\(target): \(named.at) is \(named.number), HTTP_PORT is \(port)") }
        for probe in target.probes { #expect(probe.port == port, "\(target): \(probe.at) probes port \(probe.port), HTTP_PORT is \(port)") }
        if target.inContainer {
            // In a container, 127.0.0.1 is the container's own loopback: nothing outside reaches it.
            #expect(target.environment["HTTP_HOST"] == "0.0.0.0", "\(target) must listen on every interface")
        }
    }

    @Test(arguments: targets.filter { $0.replicas == 1 })
    func theStoreLivesOnTheVolume(_ target: DeployTarget) throws {
        let volume = try #require(target.volume, "\(target) names no volume for the store")
        let store = try #require(target.environment["STORE_PATH"], "\(target) sets no STORE_PATH")
        #expect(store.hasPrefix(volume + "/"), "\(target): the store \(store) is not on the volume \(volume)")
        for name in ["STORE_URL", "STORE_URL_FILE"] {
            #expect(!target.ownVariables.contains(name), "\(target) runs one replica on SQLite but sets \(name)")
        }
    }

    /// Several replicas share the PostgreSQL store: its URL (with the password, from which the
    /// replicas also derive the key that seals outbox values) comes from the platform's secret
    /// store, mounted as the file STORE_URL_FILE names or passed as STORE_URL by reference, and
    /// never stands in the file itself.
    @Test(arguments: targets.filter { $0.replicas > 1 })
    func theSharedStoreURLComesFromASecret(_ target: DeployTarget) throws {
        #expect(target.environment["STORE_URL"] == nil, "\(target) writes STORE_URL into the file")
        if let file = target.environment["STORE_URL_FILE"] {
            #expect(target.secretFile(at: file) != nil, "\(target): STORE_URL_FILE names \(file), where no secret is mounted")
        } else {
            #expect(target.secretVariables.contains("STORE_URL"), "\(target) runs \(target.replicas) replicas but no STORE_URL from a secret")
        }
        for line in try DeployTarget.text(target.path).split(separator: "\n") where !line.trimmingCharacters(in: .whitespaces).hasPrefix("#") {
            let url = DeployTarget.firstMatch(#"(postgres(?:ql)?://[^:/@\s]+:[^@\s]+@)"#, in: String(line))
            #expect(url == nil, "\(target.path) holds a database password: \(line)")
        }
    }

    @Test(arguments: targets.filter { $0.name != "deploy/Dockerfile" })
    func theStopTimeoutCoversTheShutdown(_ target: DeployTarget) throws {
        // SIGTERM: runs get shutdown.grace, then the outbox drains; the platform must not kill sooner.
        let configuration = AppConfiguration()
        let needed = configuration.shutdownGrace + configuration.delivery.drainTimeout
        let timeout = try #require(target.stopTimeout, "\(target) sets no stop timeout")
        #expect(Duration.seconds(timeout) > needed, "\(target) kills after \(timeout) s; shutdown needs \(needed)")
    }

    @Test func probesAreLivenessOnHealthzAndReadinessOnReadyz() {
        let kubernetes = Self.targets.filter { $0.name.hasPrefix("deploy/kubernetes/") }
        #expect(kubernetes.map(\.name) == DeployTarget.kubernetesFiles)
        for target in kubernetes {
            #expect(target.probes.map(\.at) == ["livenessProbe", "readinessProbe"], "\(target)")
            #expect(target.probes.map(\.path) == ["/healthz", "/readyz"], "\(target)")
        }
        #expect(Self.targets.first { $0.name == "deploy/Dockerfile" }?.probes.map(\.path) == ["/healthz"])
    }

    @Test func composeCouncilAsksTheModelServerWhereItListens() throws {
        let services = try DeployTarget.composeServices()
        let llm = try #require(services["llm"])
        let llmPort = try #require((llm["environment"] as? [String: Any])?["LLM_PORT"] as? String)
        #expect((llm["expose"] as? [Any])?.map { "\($0)" } == [llmPort])
        let relays = try DeployTarget.composeRelays()
        #expect(relays.count == 4)
        for (name, relay) in relays {
            let environment = try #require(relay["environment"] as? [String: Any])
            let baseURLs = environment.filter { $0.key.hasPrefix("COUNCIL_") && $0.key.hasSuffix("_BASE_URL") }.map { "\($0.value)" }
            #expect(!baseURLs.isEmpty, "\(name): compose's council asks no model")
            for url in baseURLs { #expect(url.hasPrefix("http://llm:\(llmPort)/"), "\(name): \(url) is not the llm service's port \(llmPort)") }
            let dependsOn = relay["depends_on"] as? [String: Any]
            #expect(dependsOn?["llm"] != nil, "\(name) starts before its model server")
        }
    }

    /// Issue 24, item 9: `docker compose --profile postgres up …` runs PostgreSQL and three
    /// relays on it, each started once PostgreSQL accepts connections; without the profile,
    /// compose runs what it ran before (one relay on SQLite, and its model server).
    @Test func composePostgresProfileRunsThreeRelaysOnAHealthyPostgres() throws {
        let services = try DeployTarget.composeServices()
        let relays = try DeployTarget.composeRelays()
        #expect(services.filter { DeployTarget.composeProfiles($0.value).isEmpty }.keys.sorted() == ["llm", "relay"])
        let replicas = relays.filter { DeployTarget.composeProfiles($0.service) == ["postgres"] }
        #expect(replicas.map(\.name) == ["relay-1", "relay-2", "relay-3"])
        for (name, relay) in replicas {
            let postgres = (relay["depends_on"] as? [String: Any])?["postgres"] as? [String: Any]
            #expect(postgres?["condition"] as? String == "service_healthy", "\(name) may start before PostgreSQL accepts connections")
        }
        // Several containers cannot publish one host port: each relay its own.
        let hostSides = relays.flatMap { ($0.service["ports"] as? [String] ?? []).map { $0.split(separator: ":").dropLast().joined(separator: ":") } }
        #expect(hostSides.count == relays.count, "each relay publishes one port: \(hostSides)")
        #expect(Set(hostSides).count == hostSides.count, "two relays publish the same host port: \(hostSides)")

        let postgres = try #require(services["postgres"])
        #expect(DeployTarget.composeProfiles(postgres) == ["postgres"])
        #expect((postgres["image"] as? String)?.hasPrefix("postgres:") == true)
        let check = ((postgres["healthcheck"] as? [String: Any])?["test"] as? [Any] ?? []).map { "\($0)" }
        #expect(check.contains("pg_isready"), "no pg_isready healthcheck: `service_healthy` would not mean it accepts connections")
        #expect((postgres["volumes"] as? [String] ?? []).contains { $0.hasSuffix(":/var/lib/postgresql/data") }, "the database is not on a volume")
        let environment = postgres["environment"] as? [String: Any] ?? [:]
        #expect(environment["POSTGRES_PASSWORD"] == nil, "the database password stands in compose.yaml")
        let passwordFile = try #require(environment["POSTGRES_PASSWORD_FILE"] as? String)
        #expect(
            try DeployTarget.composeSecretFiles(of: postgres)[passwordFile] != nil, "POSTGRES_PASSWORD_FILE names \(passwordFile), where no secret is mounted")

        // What the header says to run names every replica (a bare `up` would start the SQLite
        // relay beside them), and the STORE_URL it says to write points at this service.
        let text = try DeployTarget.text("deploy/compose.yaml")
        let command = try #require(DeployTarget.firstMatch(#"(docker compose --profile postgres up[^\n]*)"#, in: text))
        #expect(command.split(separator: " ").map(String.init).suffix(replicas.count) == replicas.map(\.name), "\(command)")
        let template = try #require(DeployTarget.firstMatch(#"(postgres://[^\s'\\]+)"#, in: text))
        let url = try #require(URLComponents(string: template.replacingOccurrences(of: "%s", with: "password")))
        #expect(url.user == environment["POSTGRES_USER"] as? String, "\(template)")
        #expect(url.host == "postgres", "\(template)")
        #expect(url.path == "/" + (environment["POSTGRES_DB"] as? String ?? ""), "\(template)")
        #expect(url.port.map { (postgres["expose"] as? [Any] ?? []).map { "\($0)" }.contains(String($0)) } == true, "\(template)")
    }

    /// Issue 24, item 9: the Kubernetes variant runs three pods on the shared store, rolls them
    /// without ever having fewer than three ready, and a drain takes one at a time; the
    /// single-replica file stays one pod on SQLite, replaced with Recreate.
    @Test func kubernetesReplicasRollWithoutDroppingAReplicaAndDrainOneAtATime() throws {
        let documents = try DeployTarget.kubernetesDocuments("deploy/kubernetes/rhea-relay-replicas.yaml")
        #expect(!documents.contains { $0["kind"] as? String == "PersistentVolumeClaim" }, "the replicas' store is PostgreSQL: no claim")
        let deployment = try #require(documents.first { $0["kind"] as? String == "Deployment" })
        let spec = try #require(deployment["spec"] as? [String: Any])
        let replicas = try #require(spec["replicas"] as? Int)
        #expect(replicas == 3)
        let strategy = try #require(spec["strategy"] as? [String: Any])
        #expect(strategy["type"] as? String == "RollingUpdate")
        // A new pod must be ready (/readyz: it takes runs) before an old one is stopped.
        let rolling = try #require(strategy["rollingUpdate"] as? [String: Any])
        #expect(rolling["maxUnavailable"] as? Int == 0)
        #expect(rolling["maxSurge"] as? Int == 1)
        let template = try #require(spec["template"] as? [String: Any])
        let podLabels = Self.labels((template["metadata"] as? [String: Any])?["labels"])
        #expect(Self.selects(spec["selector"], podLabels), "the Deployment's selector does not match its pods")
        let volumes = ((template["spec"] as? [String: Any])?["volumes"] as? [Any] ?? []).compactMap { $0 as? [String: Any] }
        #expect(!volumes.contains { $0["persistentVolumeClaim"] != nil }, "a replica mounts a claim")

        let budget = try #require(documents.first { $0["kind"] as? String == "PodDisruptionBudget" }, "no PodDisruptionBudget")
        let budgetSpec = try #require(budget["spec"] as? [String: Any])
        #expect(Self.selects(budgetSpec["selector"], podLabels), "the budget's selector does not match the relay's pods")
        let allowed: Int? =
            if let most = budgetSpec["maxUnavailable"] as? Int { most } else if let least = budgetSpec["minAvailable"] as? Int { replicas - least } else { nil }
        #expect(allowed == 1, "the budget lets \(allowed.map(String.init) ?? "an unknown number") of \(replicas) pods go at once")

        let service = try #require(documents.first { $0["kind"] as? String == "Service" })
        #expect(Self.selects(["matchLabels": (service["spec"] as? [String: Any])?["selector"] ?? [:]], podLabels), "the Service selects no relay pod")

        let single = try DeployTarget.kubernetesDocuments("deploy/kubernetes/rhea-relay.yaml").first { $0["kind"] as? String == "Deployment" }
        let singleSpec = single?["spec"] as? [String: Any]
        #expect(singleSpec?["replicas"] as? Int == 1)
        #expect((singleSpec?["strategy"] as? [String: Any])?["type"] as? String == "Recreate")
    }

    static func labels(_ raw: Any?) -> [String: String] {
        (raw as? [String: Any] ?? [:]).mapValues { "\($0)" }
    }

    /// Whether a selector's `matchLabels` picks pods with `labels`: it names some, all with the same values.
    static func selects(_ selector: Any?, _ labels: [String: String]) -> Bool {
        let match = Self.labels((selector as? [String: Any])?["matchLabels"])
        return !match.isEmpty && match.allSatisfy { labels[$0.key] == $0.value }
    }

    /// Each platform names what a deployment passes it (its `deployVariables`, every secret
    /// among them), and every file that passes the operator's secrets passes all of them: a
    /// platform added to the list cannot be forgotten in one file.
    @Test func everyFileThatPassesSecretsPassesEveryPlatformsVariables() throws {
        let passing = Self.targets.filter { !$0.secretVariables.isEmpty }
        #expect(
            passing.map(\.name) == [
                "deploy/compose.yaml", "deploy/compose.yaml (relay-1)", "deploy/compose.yaml (relay-2)", "deploy/compose.yaml (relay-3)",
                "deploy/kubernetes/rhea-relay.yaml", "deploy/kubernetes/rhea-relay-replicas.yaml", "deploy/systemd/rhea-relay.service",
            ])
        for platform in chatPlatforms {
            let names = platform.deployVariables.map(\.name)
            #expect(Set(platform.secretVariables).isSubset(of: names), "\(platform.name): a secret the deploy files do not pass")
            for target in passing {
                for name in names { #expect(target.secretVariables.contains(name), "\(target) does not pass \(platform.name)'s \(name)") }
            }
        }
    }

    @Test(arguments: targets)
    func theRelayReadsEveryVariableAndServesEveryProbe(_ target: DeployTarget) async throws {
        guard target.replicas > 1 else { return try await serve(target, storeURL: nil) }
        // Replicas share PostgreSQL: the secret the platform mounts holds a test database's URL.
        let server = try await PostgresTestServer.shared()
        try await server.withDatabase { database in try await serve(target, storeURL: database.url) }
    }

    /// Starts the relay with the target's environment (and `storeURL` where its secret would be),
    /// fetches every probe, stops it, and checks what it served and read.
    func serve(_ target: DeployTarget, storeURL: String?) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("rhea-deploy-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let accessLog = directory.appendingPathComponent("config-access.log")

        var environment = target.environment
        for name in target.secretVariables { environment[name] = Self.placeholder(for: name) }
        // Only what a test must change: the store's folder (the volume is not here), and nothing
        // may leave the machine (the backend and every platform's API are a closed port).
        environment["STORE_PATH"] = directory.appendingPathComponent("relay.sqlite").path
        environment["TRIBUNAL_URL"] = "http://127.0.0.1:9"
        // The API of each platform the file passes credentials to: a platform given an API URL
        // and no credential is half-configured, which `serve` refuses to start with.
        for platform in chatPlatforms where platform.secretVariables.contains(where: { environment[$0] != nil }) {
            for name in platform.apiURLVariables { environment[name] = "http://127.0.0.1:9" }
        }
        environment["CONFIG_ACCESS_LOG_FILE"] = accessLog.path
        if let storeURL {
            if environment["STORE_URL_FILE"] != nil {
                // As a secret is mounted: the URL and a line break, readable by owner and group
                // (the Kubernetes manifest's defaultMode 0440).
                let file = directory.appendingPathComponent("store-url")
                try Data((storeURL + "\n").utf8).write(to: file)
                try FileManager.default.setAttributes([.posixPermissions: 0o440], ofItemAtPath: file.path)
                environment["STORE_URL_FILE"] = file.path
            }
            if target.secretVariables.contains("STORE_URL") { environment["STORE_URL"] = storeURL }
        }

        let server = try await ServeProcess(environment: environment, directory: directory)
        var statuses: [String: Int] = [:]
        for probe in target.probes { statuses[probe.path] = try await Self.status(of: probe.path, on: server) }
        let said = await server.stop()

        for probe in target.probes {
            #expect(statuses[probe.path] == 200, "\(target): \(probe.at) \(probe.path) answered \(statuses[probe.path] ?? 0)")
        }
        #expect(said.contains("serving on http://"), "\(target): \(said)")
        // The store it served from: the shared PostgreSQL for replicas, else the SQLite file.
        let store = storeURL == nil ? "(store: \(environment["STORE_PATH"] ?? "?"))" : "(store: postgres://"
        #expect(said.contains(store), "\(target) did not serve from \(store): \(said)")
        #expect(server.process.terminationStatus == 0, "\(target): SIGTERM should stop the relay cleanly: \(said)")

        let read = try Self.variablesRead(accessLog)
        #expect(read.contains("HTTP_PORT"), "the access log holds what the relay read")
        #expect(!read.contains("HTTP_PROT"), "a misspelt variable would not count as read")
        for name in target.ownVariables.sorted() {
            #expect(read.contains(name), "\(target) sets \(name), which rhea-relay serve never reads")
        }
    }

    /// A probe's answer as the platform sees it once the relay has started: it probes again
    /// while the answer is not 200 (a replica says not ready until it takes runs, which may be
    /// a moment after /healthz first answers), here for up to 60 s.
    static func status(of path: String, on server: ServeProcess) async throws -> Int {
        let deadline = ContinuousClock.now + .seconds(60)
        while true {
            let status = try await server.get(path, timeout: .seconds(10)).status
            if status == 200 || ContinuousClock.now >= deadline { return status }
            try await Task.sleep(for: .milliseconds(100))
        }
    }

    /// The variables whose values the relay took from the environment: swift-configuration logs
    /// each key it was given (`✅ http.port -> "8080" - provided by EnvironmentVariablesProvider`),
    /// spelled here as the environment spells it (`HTTP_PORT`).
    static func variablesRead(_ log: URL) throws -> Set<String> {
        let text = try String(contentsOf: log, encoding: .utf8)
        var names: Set<String> = []
        for line in text.split(separator: "\n") where line.hasPrefix("✅ ") && line.contains("provided by EnvironmentVariablesProvider") {
            guard let key = line.dropFirst(2).split(separator: " ").first else { continue }
            names.insert(ConfigValues.envName(String(key)))
        }
        return names
    }

    /// A value of the right shape for a secret the file leaves to the operator: the platform's
    /// example where it checks the shape, else a long word.
    static func placeholder(for name: String) -> String {
        let example = chatPlatforms.lazy.flatMap { $0.deployVariables }.first { $0.name == name }?.example
        return example ?? "deploy-test-secret-" + String(repeating: "0123456789", count: 4)
    }
}
