import Foundation
public import RelayPlatform
import Yams

/// What `rhea-relay doctor` checks without the network: the configuration as `serve` would read
/// it, keys in the YAML file that nothing reads (with the nearest that is read), secrets written
/// in it (never read from there), variables nothing reads, and platforms given some settings but
/// not what turns them on (docs/configuration.md, "Checking a configuration").
public enum ConfigurationDoctor {
    /// The configuration (nil when it does not load) and one finding per check.
    public static func offline(
        file: String?, environment: [String: String], platforms: [any ChatPlatform.Type]
    ) async -> (AppConfiguration?, [DoctorFinding]) {
        let readLog = ConfigReadLog()
        let configuration: AppConfiguration
        do {
            configuration = try await ConfigurationLoader.load(file: file, environment: environment, platforms: platforms, readLog: readLog)
        } catch let error as ConfigurationError {
            return (nil, [.problem("configuration", error.message)])
        } catch {
            return (nil, [.problem("configuration", "\(error)")])
        }
        var findings: [DoctorFinding] = [.ok("configuration", "read from \(file.map { "\($0) and " } ?? "")the environment")]
        if let file { findings += yamlFindings(file: file, read: readLog.keys, platforms: platforms) }
        let unread = configuration.unreadVariables
        findings += unread.isEmpty ? [.ok("environment", "every variable set with the relay's prefixes is read")] : unread.map { .problem("environment", $0) }
        for platform in configuration.platforms {
            let name = type(of: platform).name
            let status = platform.status
            findings.append(status.isHalfConfigured ? .problem(name, status.description) : .ok(name, status.description))
        }
        return (configuration, findings)
    }

    /// The YAML file's keys: each one read, or a finding that says it is not (and what was
    /// likely meant), or that a secret was written where only a variable or a file is read.
    static func yamlFindings(file: String, read: Set<String>, platforms: [any ChatPlatform.Type]) -> [DoctorFinding] {
        let subject = URL(fileURLWithPath: file).lastPathComponent
        guard let text = try? String(contentsOfFile: file, encoding: .utf8), let tree = try? Yams.load(yaml: text) else {
            return [.problem(subject, "could not be read as YAML")]
        }
        let secrets = Set(ConfigurationLoader.backendSecrets + platforms.flatMap { $0.secretVariables })
        var findings: [DoctorFinding] = []
        for key in keys(in: tree).sorted() {
            let name = ConfigValues.envName(key)
            if secrets.contains(name) {
                findings.append(
                    .problem(
                        subject,
                        "`\(key)` is a secret, and secrets are never read from the YAML file: set \(name), or `\(key)File` to a file that holds it (then take it out of \(subject))."
                    ))
            } else if !read.contains(key) {
                let hint = UnreadVariables.nearest(to: key, in: read).map { " Did you mean `\($0)`?" } ?? ""
                findings.append(.problem(subject, "`\(key)` is not a setting rhea-relay reads here; it is ignored.\(hint)"))
            }
        }
        return findings.isEmpty ? [.ok(subject, "every key is read")] : findings
    }

    /// The dotted paths of a YAML tree's leaves (a list is a leaf: `council.models`).
    static func keys(in node: Any?, prefix: String = "") -> [String] {
        guard let mapping = node as? [String: Any] else { return prefix.isEmpty ? [] : [prefix] }
        return mapping.flatMap { key, value in keys(in: value, prefix: prefix.isEmpty ? key : prefix + "." + key) }
    }
}
