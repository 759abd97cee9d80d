import Foundation
import Testing
import Yams

/// What one file in `deploy/` (or one relay service of compose.yaml) promises about the relay it
/// runs: the environment it gives `rhea-relay serve`, the ports and probe paths it names, where
/// the store is, how many replicas share it, and how long it lets the process stop. Read from the
/// files as an operator's tools would read them.
struct DeployTarget: Sendable, CustomStringConvertible {
    /// A port the file names, with where it says so.
    struct Port: Sendable {
        var at: String
        var number: Int
    }

    /// A probe the file names: the path, the port it is sent to, and what it is for.
    struct Probe: Sendable {
        var at: String
        var path: String
        var port: Int
    }

    var name: String
    /// Variables the relay's process gets from this file (plus the image's, where it runs the image).
    var environment: [String: String] = [:]
    /// Variables the file sets itself (what must be read by the relay).
    var ownVariables: Set<String> = []
    /// Variables that hold secrets (given a placeholder when the relay is started).
    var secretVariables: Set<String> = []
    var ports: [Port] = []
    var probes: [Probe] = []
    /// Where the persistent volume is mounted (the store must be under it).
    var volume: String?
    /// Seconds the platform waits after SIGTERM before killing the process.
    var stopTimeout: Int?
    /// How many relay processes the file runs on one store: more than one needs the shared
    /// PostgreSQL store (`STORE_URL`), since the SQLite file has one writer.
    var replicas = 1
    /// Files the platform puts into the container from its secret store: the path in the
    /// container, and which secret it holds. A path ending in `/` is a folder holding every key.
    var secretFiles: [String: String] = [:]
    /// Whether the relay must listen on every interface (it runs in a container).
    var inContainer: Bool

    var description: String { name }

    var httpPort: Int? { environment["HTTP_PORT"].flatMap(Int.init) }

    /// The file this target was read from (compose's services share one).
    var path: String { String(name.prefix { $0 != " " }) }

    /// Which secret the file at `path` in the container comes from, if the platform mounts one there.
    func secretFile(at path: String) -> String? {
        secretFiles[path] ?? secretFiles.first { $0.key.hasSuffix("/") && path.hasPrefix($0.key) }?.value
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static let kubernetesFiles = ["deploy/kubernetes/rhea-relay.yaml", "deploy/kubernetes/rhea-relay-replicas.yaml"]

    static func all() throws -> [DeployTarget] {
        let image = try dockerfile()
        return [image] + (try compose(image: image)) + (try kubernetesFiles.map { try kubernetes($0, image: image) }) + [
            try fly(image: image), try systemd(),
        ]
    }

    // MARK: Dockerfile

    static func dockerfile() throws -> DeployTarget {
        var target = DeployTarget(name: "deploy/Dockerfile", inContainer: true)
        // Join continued lines, then read the instructions of the last stage (the one that runs).
        let joined = try text("deploy/Dockerfile").replacingOccurrences(of: "\\\n", with: " ")
        let lines = joined.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let lastStage = lines.lastIndex { $0.hasPrefix("FROM ") } ?? 0
        for line in lines[lastStage...] where !line.hasPrefix("#") {
            let words = line.split(whereSeparator: \.isWhitespace).map(String.init)
            guard let instruction = words.first else { continue }
            switch instruction {
            case "ENV":
                for pair in words.dropFirst() {
                    let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2 else { continue }
                    target.environment[parts[0]] = parts[1]
                    target.ownVariables.insert(parts[0])
                }
            case "EXPOSE":
                for word in words.dropFirst() { target.ports.append(Port(at: "EXPOSE", number: Int(word.split(separator: "/")[0]) ?? -1)) }
            case "VOLUME":
                target.volume = firstMatch(#""(/[^"]+)""#, in: line)
            case "HEALTHCHECK":
                for probe in urlProbes(in: line, at: "HEALTHCHECK") { target.probes.append(probe) }
            default: break
            }
        }
        return target
    }

    // MARK: compose.yaml

    /// compose.yaml, YAML anchors and merge keys resolved (as compose resolves them).
    static func composeFile() throws -> [String: Any] {
        try #require(try Yams.load(yaml: text("deploy/compose.yaml")) as? [String: Any])
    }

    static func composeServices() throws -> [String: [String: Any]] {
        let services = try #require(try composeFile()["services"] as? [String: Any])
        return services.compactMapValues { $0 as? [String: Any] }
    }

    /// The services that run the relay: those built from deploy/Dockerfile, by name.
    static func composeRelays() throws -> [(name: String, service: [String: Any])] {
        try composeServices().filter { ($0.value["build"] as? [String: Any])?["dockerfile"] as? String == "deploy/Dockerfile" }
            .sorted { $0.key < $1.key }.map { (name: $0.key, service: $0.value) }
    }

    /// The secrets a service is given as files: where each is mounted, and what it is. Only a
    /// secret that compose reads from outside compose.yaml counts (a file, the operator's
    /// environment, the engine's store).
    static func composeSecretFiles(of service: [String: Any]) throws -> [String: String] {
        let secrets = try composeFile()["secrets"] as? [String: Any] ?? [:]
        var files: [String: String] = [:]
        for reference in service["secrets"] as? [Any] ?? [] {
            // Short syntax: the secret's name, at /run/secrets/NAME; long: `source` and `target`.
            let long = reference as? [String: Any]
            let source = long?["source"] as? String ?? "\(reference)"
            let mountedAt = long?["target"] as? String ?? source
            guard let definition = secrets[source] as? [String: Any],
                let from = ["file", "environment", "external"].first(where: { definition[$0] != nil })
            else { continue }
            files[mountedAt.hasPrefix("/") ? mountedAt : "/run/secrets/" + mountedAt] = "compose secret \(source) (\(from) \(definition[from] ?? ""))"
        }
        return files
    }

    static func composeProfiles(_ service: [String: Any]) -> [String] {
        (service["profiles"] as? [Any] ?? []).map { "\($0)" }
    }

    /// One target per relay service: `relay` (no profile, the default) is named after the file,
    /// the others after the file and the service (`deploy/compose.yaml (relay-1)`).
    static func compose(image: DeployTarget) throws -> [DeployTarget] {
        let relays = try composeRelays()
        return try relays.map { relay in
            let sameProfiles = relays.filter { composeProfiles($0.service) == composeProfiles(relay.service) }
            return try compose(service: relay.name, image: image, replicas: sameProfiles.count)
        }
    }

    static func compose(service name: String, image: DeployTarget, replicas: Int) throws -> DeployTarget {
        let label = name == "relay" ? "deploy/compose.yaml" : "deploy/compose.yaml (\(name))"
        var target = DeployTarget(name: label, environment: image.environment, inContainer: true)
        target.volume = image.volume
        target.replicas = replicas
        let relay = try #require(try composeServices()[name])
        target.secretFiles = try composeSecretFiles(of: relay)
        for (name, raw) in try #require(relay["environment"] as? [String: Any]) {
            let value = "\(raw)"
            target.ownVariables.insert(name)
            // `${NAME:-}` passes a secret from the operator's shell: a placeholder stands in.
            if value.hasPrefix("${") { target.secretVariables.insert(name) } else { target.environment[name] = value }
        }
        for mapping in relay["ports"] as? [String] ?? [] {
            target.ports.append(Port(at: "ports \(mapping)", number: Int(mapping.split(separator: ":").last ?? "") ?? -1))
        }
        if let test = (relay["healthcheck"] as? [String: Any])?["test"] as? [String] {
            target.probes += urlProbes(in: test.joined(separator: " "), at: "healthcheck")
        }
        for volume in relay["volumes"] as? [String] ?? [] where volume.split(separator: ":").count >= 2 {
            target.volume = String(volume.split(separator: ":")[1])
        }
        target.stopTimeout = (relay["stop_grace_period"] as? String).flatMap { Int($0.replacingOccurrences(of: "s", with: "")) }
        return target
    }

    // MARK: Kubernetes

    static func kubernetesDocuments(_ path: String) throws -> [[String: Any]] {
        try Yams.load_all(yaml: text(path)).compactMap { $0 as? [String: Any] }
    }

    static func kubernetes(_ path: String, image: DeployTarget) throws -> DeployTarget {
        var target = DeployTarget(name: path, environment: image.environment, inContainer: true)
        var namedPorts: [String: Int] = [:]
        var mounts: [String: String] = [:]
        var serviceTargets: [Any] = []
        var claimVolume: String?
        // Secret volumes by name: the secret, and which key goes to which file (none: every key).
        var secretVolumes: [String: (secret: String, items: [(key: String, path: String)])] = [:]
        for document in try kubernetesDocuments(path) {
            let spec = document["spec"] as? [String: Any] ?? [:]
            switch document["kind"] as? String {
            case "Deployment":
                let pod = try #require((spec["template"] as? [String: Any])?["spec"] as? [String: Any])
                target.stopTimeout = pod["terminationGracePeriodSeconds"] as? Int
                target.replicas = spec["replicas"] as? Int ?? 1
                for case let volume as [String: Any] in pod["volumes"] as? [Any] ?? [] {
                    guard let name = volume["name"] as? String else { continue }
                    if volume["persistentVolumeClaim"] != nil { claimVolume = name }
                    if let secret = volume["secret"] as? [String: Any], let secretName = secret["secretName"] as? String {
                        let items = (secret["items"] as? [Any] ?? []).compactMap { $0 as? [String: Any] }.compactMap { item in
                            (item["key"] as? String).flatMap { key in (item["path"] as? String).map { (key: key, path: $0) } }
                        }
                        secretVolumes[name] = (secretName, items)
                    }
                }
                let container = try #require((pod["containers"] as? [Any])?.first as? [String: Any])
                for case let port as [String: Any] in container["ports"] as? [Any] ?? [] {
                    let number = port["containerPort"] as? Int ?? -1
                    target.ports.append(Port(at: "containerPort", number: number))
                    if let name = port["name"] as? String { namedPorts[name] = number }
                }
                for case let variable as [String: Any] in container["env"] as? [Any] ?? [] {
                    let name = try #require(variable["name"] as? String)
                    target.ownVariables.insert(name)
                    if let value = variable["value"] { target.environment[name] = "\(value)" } else { target.secretVariables.insert(name) }
                }
                for case let mount as [String: Any] in container["volumeMounts"] as? [Any] ?? [] {
                    guard let name = mount["name"] as? String, let mountPath = mount["mountPath"] as? String else { continue }
                    mounts[name] = mountPath
                    guard let secret = secretVolumes[name] else { continue }
                    if secret.items.isEmpty { target.secretFiles[mountPath + "/"] = "Secret \(secret.secret), every key" }
                    for item in secret.items { target.secretFiles[mountPath + "/" + item.path] = "Secret \(secret.secret), key \(item.key)" }
                }
                for kind in ["livenessProbe", "readinessProbe"] {
                    let get = try #require((container[kind] as? [String: Any])?["httpGet"] as? [String: Any])
                    target.probes.append(Probe(at: kind, path: get["path"] as? String ?? "", port: resolve(get["port"], namedPorts)))
                }
            case "Service":
                for case let port as [String: Any] in spec["ports"] as? [Any] ?? [] { serviceTargets.append(port["targetPort"] ?? -1) }
            default: break
            }
        }
        for port in serviceTargets { target.ports.append(Port(at: "Service targetPort", number: resolve(port, namedPorts))) }
        target.volume = claimVolume.flatMap { mounts[$0] }
        return target
    }

    private static func resolve(_ port: Any?, _ named: [String: Int]) -> Int {
        if let number = port as? Int { return number }
        return (port as? String).flatMap { named[$0] } ?? -1
    }

    // MARK: fly.toml

    /// fly.toml is read line by line: its tables and `key = value` pairs, which is all it uses.
    static func fly(image: DeployTarget) throws -> DeployTarget {
        var target = DeployTarget(name: "deploy/fly.toml", environment: image.environment, inContainer: true)
        var table = ""
        for raw in try text("deploy/fly.toml").split(separator: "\n") {
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.hasPrefix("#") || line.isEmpty { continue }
            if line.hasPrefix("[") {
                table = line.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
                continue
            }
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            let (key, value) = (parts[0], parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
            switch (table, key) {
            case ("env", _):
                target.environment[key] = value
                target.ownVariables.insert(key)
            case ("http_service", "internal_port"): target.ports.append(Port(at: "internal_port", number: Int(value) ?? -1))
            case ("http_service.checks", "path"): target.probes.append(Probe(at: "http_service.checks", path: value, port: -1))
            case ("mounts", "destination"): target.volume = value
            case ("", "kill_timeout"): target.stopTimeout = Int(value)
            default: break
            }
        }
        // Fly sends checks to the service's internal port.
        let internalPort = target.ports.first { $0.at == "internal_port" }?.number ?? -1
        target.probes = target.probes.map { Probe(at: $0.at, path: $0.path, port: internalPort) }
        return target
    }

    // MARK: systemd

    static func systemd() throws -> DeployTarget {
        var target = DeployTarget(name: "deploy/systemd/rhea-relay.service", inContainer: false)
        for line in try text("deploy/systemd/rhea-relay.service").split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "Environment":
                let pair = parts[1].split(separator: "=", maxSplits: 1).map(String.init)
                target.environment[pair[0]] = pair[1]
                target.ownVariables.insert(pair[0])
            case "StateDirectory": target.volume = "/var/lib/" + parts[1]
            case "TimeoutStopSec": target.stopTimeout = Int(parts[1])
            default: break
            }
        }
        // The secrets file the unit reads: its example names every secret the relay takes.
        for line in try text("deploy/systemd/secrets.env.example").split(separator: "\n") where !line.hasPrefix("#") {
            guard let name = line.split(separator: "=").first.map(String.init) else { continue }
            target.ownVariables.insert(name)
            target.secretVariables.insert(name)
        }
        return target
    }

    // MARK: Helpers

    static func urlProbes(in text: String, at place: String) -> [Probe] {
        guard let regex = try? NSRegularExpression(pattern: #"http://(?:127\.0\.0\.1|localhost):(\d+)(/[^\s"']*)"#) else { return [] }
        return regex.matches(in: text, range: NSRange(text.startIndex..., in: text)).compactMap { match in
            guard let port = Range(match.range(at: 1), in: text), let path = Range(match.range(at: 2), in: text) else { return nil }
            return Probe(at: place, path: String(text[path]), port: Int(text[port]) ?? -1)
        }
    }

    static func firstMatch(_ pattern: String, in text: String) -> String? {
        guard let regex = try? NSRegularExpression(pattern: pattern),
            let match = regex.firstMatch(in: text, range: NSRange(text.startIndex..., in: text)),
            let range = Range(match.range(at: 1), in: text)
        else { return nil }
        return String(text[range])
    }
}
