import Foundation
public import Logging
import RelayCore
import RelayHTTP
import RelayPlatform
import RelayStore
import RelayTribunal

extension ConfigurationDoctor {
    /// What needs the network: the backend answers (the Rhea gateway's health, or each council
    /// model's `GET /models` with its key), the store can be reached (PostgreSQL: a connection
    /// and the schema's version, nothing changed; SQLite: its directory is writable), and each
    /// platform that is on takes its credentials (`ChatPlatform.checkCredentials`).
    public static func online(_ configuration: AppConfiguration, checkBackend: Bool = true, logger: Logger) async -> [DoctorFinding] {
        var findings: [DoctorFinding] = []
        if checkBackend {
            do {
                findings += try await HTTPTransport.withOwnClient(maxConnectionsPerHost: 2) { transport in
                    try await backendFindings(configuration, transport: transport, logger: logger)
                }
            } catch {
                findings.append(.problem("backend", "\(error)"))
            }
        }
        findings.append(await storeFinding(configuration, logger: logger))
        for platform in configuration.platforms where platform.status.isOn {
            switch await platform.checkCredentials(logger: logger) {
            case .accepted(let whose)?: findings.append(.ok(type(of: platform).name, whose))
            case .refused(let why, _)?, .unanswered(let why)?: findings.append(.problem(type(of: platform).name, why))
            case nil: break
            }
        }
        return findings
    }

    static func backendFindings(_ configuration: AppConfiguration, transport: HTTPTransport, logger: Logger) async throws -> [DoctorFinding] {
        switch configuration.backend {
        case .rhea:
            do throws(TribunalError) {
                let health = try await RheaTribunalClient(configuration: configuration.tribunal, transport: transport, logger: logger).health()
                return [.ok("backend", "\(RelayRuntime.describeBackend(configuration)) answers (\(health.status))")]
            } catch {
                return [.problem("backend", error.operatorMessage)]
            }
        case .council(let council):
            var findings: [DoctorFinding] = []
            for model in council.models {
                findings.append(await modelFinding(model, transport: transport))
            }
            return findings
        }
    }

    /// `GET {baseURL}/models` with the model's key: what every OpenAI-compatible server answers.
    static func modelFinding(_ model: CouncilModel, transport: HTTPTransport) async -> DoctorFinding {
        let subject = "council model \(model.name)"
        let request = OpenAICompatibleClient.modelsRequest(baseURL: model.baseURL, apiKey: model.apiKey)
        let place = MaskedURL.display(model.baseURL)
        do throws(HTTPFailure) {
            let answer = try await transport.exchange(request, timeout: .seconds(10), maxBodyBytes: 1 << 20)
            switch answer.status {
            case 200..<300: return .ok(subject, "\(place) answers")
            case 401, 403:
                return .problem(
                    subject, "\(place) refused the key (HTTP \(answer.status)): check \(model.apiKeyEnv ?? "council.\(model.name).apiKeyEnv") holds a valid key"
                )
            default:
                return .problem(subject, "\(place) answered HTTP \(answer.status) to GET /models: check council.\(model.name).baseURL")
            }
        } catch {
            return .problem(subject, "could not reach \(place) (\(error)): check that it runs, and council.\(model.name).baseURL")
        }
    }

    static func storeFinding(_ configuration: AppConfiguration, logger: Logger) async -> DoctorFinding {
        if let url = configuration.storeURL {
            do {
                let version = try await PostgresStore.schemaVersion(url: url, logger: logger)
                let latest = PostgresStore.supportedSchemaVersion
                switch version {
                case nil: return .ok("store", "PostgreSQL at \(url) answers; no relay has used it yet (`serve` makes its tables)")
                case let version? where version > latest:
                    return .problem("store", "PostgreSQL at \(url) has schema \(version), newer than this build's \(latest): run the newer rhea-relay")
                case let version?:
                    return .ok("store", "PostgreSQL at \(url) answers, schema \(version)\(version < latest ? " (`serve` brings it to \(latest))" : "")")
                }
            } catch {
                return .problem("store", "PostgreSQL at \(url): \(error). Check STORE_URL (the address, user, password, sslmode).")
            }
        }
        let path = configuration.storePath
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        guard FileManager.default.isWritableFile(atPath: directory.isEmpty ? "." : directory) else {
            return .problem("store", "SQLite at \(path): the directory \(directory) is missing or not writable. Set STORE_PATH to a writable place.")
        }
        return .ok("store", "SQLite at \(path)\(FileManager.default.fileExists(atPath: path) ? "" : " (made at the first start)")")
    }
}
