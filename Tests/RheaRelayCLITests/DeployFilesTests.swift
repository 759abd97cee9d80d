import Foundation
import RelayPipeline
import RelayPlatform
import RelayServer
import Testing
import Yams

// The binary's own platform list (`chatPlatforms`), so these tests read what the relay they start reads.
@testable import rhea_relay

/// Issue 13, point 5: every probe, port and environment variable named in `deploy/` is checked
/// against what `rhea-relay serve` really serves and reads, so the files cannot drift from the
/// server. The server is the built binary, started with each file's environment; what it read is
/// taken from swift-configuration's own access log (`CONFIG_ACCESS_LOG_FILE`).
@Suite("deploy/: the files match the server", .serialized)
struct DeployFilesTests {
    static let targets: [DeployTarget] = (try? DeployTarget.all()) ?? []

    @Test func everyFileIsRead() throws {
        let names = try DeployTarget.all().map(\.name)
        #expect(names.count == 5)
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

    @Test(arguments: targets)
    func theStoreLivesOnTheVolume(_ target: DeployTarget) throws {
        let volume = try #require(target.volume, "\(target) names no volume for the store")
        let store = try #require(target.environment["STORE_PATH"], "\(target) sets no STORE_PATH")
        #expect(store.hasPrefix(volume + "/"), "\(target): the store \(store) is not on the volume \(volume)")
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
        let kubernetes = Self.targets.first { $0.name.contains("kubernetes") }
        #expect(kubernetes?.probes.map(\.at) == ["livenessProbe", "readinessProbe"])
        #expect(kubernetes?.probes.map(\.path) == ["/healthz", "/readyz"])
        #expect(Self.targets.first { $0.name == "deploy/Dockerfile" }?.probes.map(\.path) == ["/healthz"])
    }

    @Test func composeCouncilAsksTheModelServerWhereItListens() throws {
        let compose = try #require(try Yams.load(yaml: DeployTarget.text("deploy/compose.yaml")) as? [String: Any])
        let services = try #require(compose["services"] as? [String: Any])
        let llm = try #require(services["llm"] as? [String: Any])
        let llmPort = try #require((llm["environment"] as? [String: Any])?["LLM_PORT"] as? String)
        #expect((llm["expose"] as? [Any])?.map { "\($0)" } == [llmPort])
        let relay = try #require((services["relay"] as? [String: Any])?["environment"] as? [String: Any])
        let baseURLs = relay.filter { $0.key.hasPrefix("COUNCIL_") && $0.key.hasSuffix("_BASE_URL") }.map { "\($0.value)" }
        #expect(!baseURLs.isEmpty, "compose's council asks no model")
        for url in baseURLs { #expect(url.hasPrefix("http://llm:\(llmPort)/"), "\(url) is not the llm service's port \(llmPort)") }
        let dependsOn = (services["relay"] as? [String: Any])?["depends_on"] as? [String: Any]
        #expect(dependsOn?["llm"] != nil, "the relay starts before its model server")
    }

    /// Each platform names what a deployment passes it (its `deployVariables`, every secret
    /// among them), and every file that passes the operator's secrets passes all of them: a
    /// platform added to the list cannot be forgotten in one file.
    @Test func everyFileThatPassesSecretsPassesEveryPlatformsVariables() throws {
        let passing = Self.targets.filter { !$0.secretVariables.isEmpty }
        #expect(passing.map(\.name) == ["deploy/compose.yaml", "deploy/kubernetes/rhea-relay.yaml", "deploy/systemd/rhea-relay.service"])
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
        for name in chatPlatforms.flatMap({ $0.apiURLVariables }) { environment[name] = "http://127.0.0.1:9" }
        environment["CONFIG_ACCESS_LOG_FILE"] = accessLog.path

        let server = try await ServeProcess(environment: environment, directory: directory)
        var statuses: [String: Int] = [:]
        for probe in target.probes { statuses[probe.path] = try await server.get(probe.path).status }
        let said = await server.stop()

        for probe in target.probes {
            #expect(statuses[probe.path] == 200, "\(target): \(probe.at) \(probe.path) answered \(statuses[probe.path] ?? 0)")
        }
        #expect(said.contains("rhea-relay serving on"), "\(target): \(said)")
        #expect(server.process.terminationStatus == 0, "\(target): SIGTERM should stop the relay cleanly: \(said)")

        let read = try Self.variablesRead(accessLog)
        #expect(read.contains("HTTP_PORT"), "the access log holds what the relay read")
        #expect(!read.contains("HTTP_PROT"), "a misspelt variable would not count as read")
        for name in target.ownVariables.sorted() {
            #expect(read.contains(name), "\(target) sets \(name), which rhea-relay serve never reads")
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
