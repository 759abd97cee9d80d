import ArgumentParser
import Foundation
import Logging
import RelayPlatform
import RelayServer

/// `rhea-relay doctor`: checks the configuration without serving, one line per check.
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor", abstract: "Check the configuration without serving: one line per check, ✓ or ✗ with the fix.",
        discussion: "Exit codes: 0 every check passed, 2 one did not.")

    @Option(name: .long, help: "The YAML configuration file (environment variables override it).")
    var config: String?

    @Flag(name: .long, help: "Skip the checks that call the backend and the store.")
    var offline = false

    func run() async throws {
        let environment = ProcessInfo.processInfo.environment
        var (configuration, findings) = await ConfigurationDoctor.offline(file: config, environment: environment, platforms: chatPlatforms)
        if let read = configuration, !offline {
            // With no backend configured, the one `chat`, `run` and `serve` would use: the local model, if it answers.
            var backendKnown = true
            if read.backendSource == .unset {
                do {
                    configuration = try await LocalModel.chooseBackend(for: read)
                } catch let error as ConfigurationError {
                    findings.append(.problem("backend", error.message))
                    backendKnown = false
                }
            }
            let quiet = Logger(label: "rhea-relay.doctor", factory: { _ in SwiftLogNoOpLogHandler() })
            findings += await ConfigurationDoctor.online(configuration ?? read, checkBackend: backendKnown, logger: quiet)
        }
        for finding in findings { writeOut(finding.line) }
        if findings.contains(where: { !$0.passed }) { throw ExitCode(2) }
    }
}
