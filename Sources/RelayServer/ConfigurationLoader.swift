import Configuration
import Foundation
import Logging
import RelayConsole
import RelayCore
import RelayPipeline
public import RelayPlatform
import RelayStore
import RelayTribunal
import RheaAPI
import SystemPackage

/// Reads `AppConfiguration` from an optional YAML file and the environment (which overrides it).
///
/// Keys are dotted paths in the YAML (`tribunal.url`); the environment spells them in capitals
/// with underscores (`TRIBUNAL_URL`). Secrets are read from the environment only
/// (`TRIBUNAL_TOKEN`, `TRIBUNAL_API_KEY`) or from files the configuration names
/// (`tribunal.tokenFile`, `tribunal.apiKeyFile`), never from the YAML itself. Each platform in
/// `platforms` reads its own section and names its own secrets.
public enum ConfigurationLoader {
    /// The backend's and the server's secrets; platforms add theirs.
    static let backendSecrets = ["TRIBUNAL_TOKEN", "TRIBUNAL_API_KEY", "HTTP_ADMIN_TOKEN", "API_JWT_SECRET"]

    /// `readLog`, when given, collects every variable the configuration read (the docs' test
    /// compares it with the variables the docs name).
    public static func load(
        file: String?, environment: [String: String]? = nil, platforms: [any ChatPlatform.Type], readLog: ConfigReadLog = ConfigReadLog()
    ) async throws -> AppConfiguration {
        var environment = environment ?? ProcessInfo.processInfo.environment
        // The `api` section's variables are spelled `RHEA_API_*` (`API_ENABLED` alone would say
        // nothing of which API); the provider reads keys as `API_*`, so those are aliased.
        for (name, value) in environment where name.hasPrefix("RHEA_API_") && environment[String(name.dropFirst(5))] == nil {
            environment[String(name.dropFirst(5))] = value
        }
        let env = EnvironmentVariablesProvider(
            environmentVariables: environment,
            secretsSpecifier: .specific(Set(backendSecrets + platforms.flatMap { $0.secretVariables })))
        var providers: [any ConfigProvider] = [env]
        if let file {
            guard FileManager.default.fileExists(atPath: file) else {
                throw ConfigurationError("The config file \(file) does not exist. Check the path given to --config.")
            }
            do {
                providers.append(try await FileProvider<YAMLSnapshot>(filePath: FilePath(file)))
            } catch {
                throw ConfigurationError("The config file \(file) is not valid YAML: \(error)")
            }
        }
        let values = ConfigValues(
            reader: ConfigReader(providers: providers), secrets: ConfigReader(provider: env), environment: environment, readLog: readLog)
        var configuration = try build(values, platforms: platforms)
        // Read by name rather than by key: the variables council models name for their keys; and
        // the council's own, read only when it is the backend.
        let named = Set(environment.keys.filter { name in environment.values.contains(name) })
            .union(["council.models", "council.quorum", "council.chairman"].map(ConfigValues.envName))
        configuration.unreadVariables = UnreadVariables.unread(environment: environment, read: values.readLog.read, alsoKnown: named)
        return configuration
    }

    /// The `api` section: the served Rhea API, its keys file, its bearer-token secret, its limits.
    static func apiSettings(_ values: ConfigValues) throws -> RheaAPISettings {
        var api = RheaAPISettings()
        api.enabled = try values.bool("api.enabled") ?? false
        api.developmentMode = try values.bool("api.development") ?? false
        api.perMinute = try values.int("api.perMinute", in: 1...100_000) ?? api.perMinute
        api.perDay = try values.int("api.perDay", in: 1...10_000_000) ?? api.perDay
        if let skew = try values.seconds("api.clockSkew") {
            guard skew <= .seconds(300) else { throw ConfigurationError("api.clockSkew (RHEA_API_CLOCK_SKEW) must be at most 300 seconds.") }
            api.clockSkew = skew
        }
        // Whole seconds, a minute to a year: a token's `exp` further ahead is refused.
        if let lifetime = try values.int("api.maxTokenLifetime", in: 60...31_536_000) { api.maxTokenLifetime = .seconds(lifetime) }
        // Held to the rule of secret files, readable by others too: the digests of random keys
        // cannot be reversed, but a hand-made key's can be guessed offline.
        if let path = values.string("api.keysFile"), let text = try values.secretFile("api.keysFile") {
            do {
                api.keyDigests = try APIKeyFile.digests(in: text, path: path)
            } catch {
                throw ConfigurationError("api.keysFile (RHEA_API_KEYS_FILE): \(error)")
            }
        }
        api.jwtSecret = try values.secret("api.jwtSecret", fileKey: "api.jwtSecretFile")
        if let secret = api.jwtSecret, secret.utf8.count < RheaAPISettings.minimumSecretLength {
            throw ConfigurationError(
                "api.jwtSecret (RHEA_API_JWT_SECRET) must be at least \(RheaAPISettings.minimumSecretLength) characters long, as the Rhea gateway requires.")
        }
        if api.enabled, api.keyDigests.isEmpty, api.jwtSecret == nil, !api.developmentMode {
            throw ConfigurationError(
                "api.enabled (RHEA_API_ENABLED) needs a way in: api.keysFile (RHEA_API_KEYS_FILE; `rhea-relay api-key new` makes a key and its line) or api.jwtSecret (RHEA_API_JWT_SECRET)."
            )
        }
        return api
    }

    /// `console.enabled` (`CONSOLE_ENABLED`), `publicURL` (`PUBLIC_URL`), `console.sessionMinutes`.
    static func consoleSettings(_ values: ConfigValues) throws -> ConsoleSettings {
        var console = ConsoleSettings(enabled: try values.bool("console.enabled") ?? false)
        if let url = values.string("publicURL") {
            if let problem = ConsoleSettings.problem(withPublicURL: url) { throw ConfigurationError(problem) }
            console.publicURL = ConsoleSettings.withoutTrailingSlash(url)
        }
        if let minutes = try values.int("console.sessionMinutes", in: ConsoleSettings.sessionMinutes) { console.sessionLifetime = .seconds(minutes * 60) }
        if console.enabled, console.publicURL == nil {
            throw ConfigurationError(
                "console.enabled (CONSOLE_ENABLED) needs publicURL (PUBLIC_URL): the relay's address as browsers reach it (https://relay.example.com), under which sign-in links are made."
            )
        }
        return console
    }

    static func build(_ values: ConfigValues, platforms: [any ChatPlatform.Type]) throws -> AppConfiguration {
        var config = AppConfiguration()

        // Backend.
        var tribunal = RheaTribunalConfiguration()
        if let url = try values.url("tribunal.url") { tribunal.baseURL = url }
        tribunal.token = try values.secret("tribunal.token", fileKey: "tribunal.tokenFile")
        tribunal.apiKey = try values.secret("tribunal.apiKey", fileKey: "tribunal.apiKeyFile")
        tribunal.developmentMode = try values.bool("tribunal.developmentMode") ?? false
        tribunal.timeouts.quick = try values.seconds("tribunal.timeouts.quick") ?? tribunal.timeouts.quick
        tribunal.timeouts.dialog = try values.seconds("tribunal.timeouts.dialog") ?? tribunal.timeouts.dialog
        tribunal.timeouts.tribunal = try values.seconds("tribunal.timeouts.tribunal") ?? tribunal.timeouts.tribunal
        tribunal.timeouts.health = try values.seconds("tribunal.timeouts.health") ?? tribunal.timeouts.health
        if let attempts = try values.int("tribunal.retry.attempts", in: 1...10) { tribunal.retry.attempts = attempts }
        config.tribunal = tribunal
        let backendName = values.string("tribunal.backend")?.lowercased()
        // Nothing said about a backend: the hosted gateway is an option, not a default, so the
        // local model is tried at start (`LocalModel.chooseBackend`).
        if backendName == nil, values.string("tribunal.url") == nil, tribunal.token == nil, tribunal.apiKey == nil {
            config.backendSource = .unset
        }
        if let url = try values.url("localModel.url") { config.localModelURL = url }
        config.localModelPrice = try values.price("localModel.")
        // Whatever the backend: the local model's council keeps them too, and a value that is
        // wrong is refused rather than ignored.
        config.councilTiming = try CouncilConfigurationLoader.timing(values)
        switch backendName {
        case nil, "rhea": config.backend = .rhea
        case "council": config.backend = .council(try CouncilConfigurationLoader.load(values))
        case let other?:
            throw ConfigurationError(
                "tribunal.backend (TRIBUNAL_BACKEND) must be `rhea` (the Rhea Tribunal HTTP API) or `council` (the built-in council), got `\(other)`.")
        }

        // Relay defaults and limits.
        var relay = RelayConfiguration()
        if let tier = values.string("relay.tier") {
            guard let parsed = Tier(rawValue: tier.lowercased()) else {
                throw ConfigurationError("relay.tier (RELAY_TIER) must be cheap, mid or frontier, got `\(tier)`.")
            }
            relay.defaultTier = parsed
        }
        relay.defaultK = try values.int("relay.k", in: 2...10) ?? relay.defaultK
        if let lang = values.string("relay.lang") {
            guard let language = Language.lookup(lang) else {
                throw ConfigurationError("relay.lang (RELAY_LANG) must be a language code or English name, got `\(lang)`.")
            }
            relay.defaultLanguage = language
        }
        if let retention = values.string("relay.retention") {
            guard let parsed = Retention(rawValue: retention.lowercased()) else {
                throw ConfigurationError("relay.retention (RELAY_RETENTION) must be full, metadata or off, got `\(retention)`.")
            }
            relay.defaultRetention = parsed
        }
        relay.chainLimits.maxBlocks = try values.int("chains.maxBlocks", in: 1...100) ?? relay.chainLimits.maxBlocks
        relay.chainLimits.maxModelCalls = try values.int("chains.maxModelCalls", in: 1...1000) ?? relay.chainLimits.maxModelCalls
        relay.chainLimits.maxLoop = try values.int("chains.maxLoop", in: 2...100) ?? relay.chainLimits.maxLoop
        relay.historyDays = try values.int("relay.historyDays", in: 1...36_500) ?? relay.historyDays
        relay.maxChainsPerTeam = try values.int("chains.maxPerTeam", in: 1...10000) ?? relay.maxChainsPerTeam
        relay.maxCustomCommandsPerTeam = try values.int("commands.maxPerTeam", in: 1...10000) ?? relay.maxCustomCommandsPerTeam
        if let list = values.string("admin.users") {
            // The terminal's person is its operator already: no entry names it.
            do {
                relay.operatorAdmins = try OperatorAdmins(parsing: list, platforms: Set(platforms.map { $0.name }))
            } catch {
                throw ConfigurationError("admin.users (ADMIN_USERS): \(error.description)")
            }
        }
        if let raw = values.string("budget.monthlyUSD") {
            guard let dollars = Double(raw.hasPrefix("$") ? String(raw.dropFirst()) : raw), dollars.isFinite, dollars > 0, dollars <= 1_000_000 else {
                throw ConfigurationError(
                    "budget.monthlyUSD (BUDGET_MONTHLY_USD) must be a positive number of US dollars a month, at most 1000000 (e.g. 20), got `\(raw)`.")
            }
            relay.monthlyBudget = dollars
        }
        config.relay = relay
        config.transcription = try TranscriptionConfigurationLoader.load(values)

        config.storePath = values.string("store.path") ?? config.storePath
        if let url = try values.secret("store.url", fileKey: "store.urlFile") {
            do {
                config.storeURL = try PostgresURL(url)
            } catch {
                throw ConfigurationError("store.url (STORE_URL): \(error.description)")
            }
        }
        if let level = values.string("log.level") {
            // Read as swift-log's levels where it is used: a word it does not know would leave
            // the default in place without a word, so it is refused here.
            guard Logger.Level(rawValue: level.lowercased()) != nil else {
                let levels = Logger.Level.allCases.map(\.rawValue).joined(separator: ", ")
                throw ConfigurationError("log.level (LOG_LEVEL) must be one of \(levels), got `\(level)`.")
            }
            config.logLevel = level.lowercased()
        }

        // Serving.
        config.http.host = values.string("http.host") ?? config.http.host
        config.http.port = try values.int("http.port", in: 0...65535) ?? config.http.port
        config.http.outboundConnectionsPerHost = try values.int("http.outboundConnections", in: 1...10_000) ?? config.http.outboundConnectionsPerHost
        config.http.idleTimeout = try values.seconds("http.idleTimeout") ?? config.http.idleTimeout
        config.http.readTimeout = try values.seconds("http.readTimeout") ?? config.http.readTimeout
        config.http.maxConnections = try values.int("http.maxConnections", in: 1...1_000_000) ?? config.http.maxConnections
        config.http.adminToken = try values.secret("http.adminToken", fileKey: "http.adminTokenFile")
        if let token = config.http.adminToken, token.utf8.count < 16 {
            throw ConfigurationError("http.adminToken (HTTP_ADMIN_TOKEN) must be at least 16 characters long (a random one: `openssl rand -hex 32`).")
        }
        config.runs.maxInFlight = try values.int("runs.maxInFlight", in: 1...100_000) ?? config.runs.maxInFlight
        config.runs.busyDepth = try values.int("runs.busyDepth", in: 1...10_000_000) ?? config.runs.busyDepth
        config.shutdownGrace = try values.seconds("shutdown.grace") ?? config.shutdownGrace
        config.delivery.maxAttempts = try values.int("delivery.maxAttempts", in: 1...100) ?? config.delivery.maxAttempts
        config.api = try apiSettings(values)
        config.console = try consoleSettings(values)
        config.platforms = try platforms.map { try $0.init(configuration: values) }
        return config
    }
}
