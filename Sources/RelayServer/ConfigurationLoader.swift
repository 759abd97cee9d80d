import Configuration
import Foundation
import RelayCore
import RelayTribunal
import SlackAdapter
import SystemPackage

/// Reads `AppConfiguration` from an optional YAML file and the environment (which overrides it).
///
/// Keys are dotted paths in the YAML (`tribunal.url`); the environment spells them in capitals
/// with underscores (`TRIBUNAL_URL`). Secrets are read from the environment only
/// (`TRIBUNAL_TOKEN`, `TRIBUNAL_API_KEY`) or from files the configuration names
/// (`tribunal.tokenFile`, `tribunal.apiKeyFile`), never from the YAML itself.
public enum ConfigurationLoader {
    public static func load(file: String?, environment: [String: String]? = nil) async throws -> AppConfiguration {
        let environment = environment ?? ProcessInfo.processInfo.environment
        let env = EnvironmentVariablesProvider(
            environmentVariables: environment,
            secretsSpecifier: .specific(["TRIBUNAL_TOKEN", "TRIBUNAL_API_KEY", "SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN"]))
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
        let values = Values(reader: ConfigReader(providers: providers), secrets: ConfigReader(provider: env), environment: environment)
        return try build(values)
    }

    static func build(_ values: Values) throws -> AppConfiguration {
        var config = AppConfiguration()

        // Backend.
        var tribunal = RheaTribunalConfiguration()
        if let url = values.string("tribunal.url") {
            guard let parsed = URL(string: url), let scheme = parsed.scheme, ["http", "https"].contains(scheme), parsed.host != nil else {
                throw ConfigurationError("tribunal.url (TRIBUNAL_URL) must be an http:// or https:// URL, got `\(url)`.")
            }
            tribunal.baseURL = url
        }
        tribunal.token = try values.secret("tribunal.token", fileKey: "tribunal.tokenFile")
        tribunal.apiKey = try values.secret("tribunal.apiKey", fileKey: "tribunal.apiKeyFile")
        tribunal.developmentMode = try values.bool("tribunal.developmentMode") ?? false
        tribunal.timeouts.quick = try values.seconds("tribunal.timeouts.quick") ?? tribunal.timeouts.quick
        tribunal.timeouts.dialog = try values.seconds("tribunal.timeouts.dialog") ?? tribunal.timeouts.dialog
        tribunal.timeouts.tribunal = try values.seconds("tribunal.timeouts.tribunal") ?? tribunal.timeouts.tribunal
        tribunal.timeouts.health = try values.seconds("tribunal.timeouts.health") ?? tribunal.timeouts.health
        if let attempts = try values.int("tribunal.retry.attempts", in: 1...10) { tribunal.retry.attempts = attempts }
        config.tribunal = tribunal
        switch values.string("tribunal.backend")?.lowercased() {
        case nil, "rhea": config.backend = .rhea
        case "council": config.backend = .council(try CouncilConfigurationLoader.load(values))
        case let other?:
            throw ConfigurationError("tribunal.backend (TRIBUNAL_BACKEND) must be `rhea` (the Rhea Tribunal HTTP API) or `council` (the built-in council), got `\(other)`.")
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
        relay.maxChainsPerTeam = try values.int("chains.maxPerTeam", in: 1...10000) ?? relay.maxChainsPerTeam
        relay.maxCustomCommandsPerTeam = try values.int("commands.maxPerTeam", in: 1...10000) ?? relay.maxCustomCommandsPerTeam
        config.relay = relay

        config.storePath = values.string("store.path") ?? config.storePath
        config.logLevel = values.string("log.level") ?? config.logLevel

        // Serving.
        config.http.host = values.string("http.host") ?? config.http.host
        config.http.port = try values.int("http.port", in: 0...65535) ?? config.http.port
        config.shutdownGrace = try values.seconds("shutdown.grace") ?? config.shutdownGrace
        config.delivery.maxAttempts = try values.int("delivery.maxAttempts", in: 1...100) ?? config.delivery.maxAttempts
        config.slack = try slack(values)
        return config
    }

    /// Slack: secrets from the environment or files, never from the YAML itself.
    static func slack(_ values: Values) throws -> SlackConfiguration {
        var slack = SlackConfiguration(
            signingSecret: try values.secret("slack.signingSecret", fileKey: "slack.signingSecretFile"),
            botToken: try values.secret("slack.botToken", fileKey: "slack.botTokenFile"),
            appToken: try values.secret("slack.appToken", fileKey: "slack.appTokenFile"))
        if let url = values.string("slack.apiURL") {
            guard let parsed = URL(string: url), let scheme = parsed.scheme, ["http", "https"].contains(scheme), parsed.host != nil else {
                throw ConfigurationError("slack.apiURL (SLACK_API_URL) must be an http:// or https:// URL, got `\(url)`.")
            }
            slack = SlackConfiguration(signingSecret: slack.signingSecret, botToken: slack.botToken, appToken: slack.appToken, apiURL: url)
        }
        if let reaction = values.string("slack.reaction") {
            slack.tribunalReaction = reaction.trimmingCharacters(in: CharacterSet(charactersIn: ":"))
        }
        if let token = slack.botToken, !token.hasPrefix("xoxb-") {
            throw ConfigurationError("SLACK_BOT_TOKEN (slack.botToken) must be a bot token starting with `xoxb-`.")
        }
        if let token = slack.appToken, !token.hasPrefix("xapp-") {
            throw ConfigurationError("SLACK_APP_TOKEN (slack.appToken) must be an app-level token starting with `xapp-` (Socket Mode).")
        }
        return slack
    }

    /// Typed reads with messages that name the key and its environment variable.
    struct Values {
        let reader: ConfigReader
        let secrets: ConfigReader
        /// For the variables that council models name (`apiKeyEnv`).
        let environment: [String: String]

        func string(_ key: String) -> String? {
            reader.string(forKey: ConfigKey(key)).flatMap { $0.isEmpty ? nil : $0 }
        }

        func strings(_ key: String) -> [String]? {
            reader.stringArray(forKey: ConfigKey(key))
        }

        func int(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
            guard let raw = string(key) else { return nil }
            guard let value = Int(raw), range.contains(value) else {
                throw ConfigurationError("\(key) (\(Self.envName(key))) must be a whole number from \(range.lowerBound) to \(range.upperBound), got `\(raw)`.")
            }
            return value
        }

        func seconds(_ key: String) throws -> Double? {
            guard let raw = string(key) else { return nil }
            guard let value = Double(raw), value > 0, value <= 3600 else {
                throw ConfigurationError("\(key) (\(Self.envName(key))) must be a number of seconds above 0, got `\(raw)`.")
            }
            return value
        }

        func bool(_ key: String) throws -> Bool? {
            guard let raw = string(key)?.lowercased() else { return nil }
            switch raw {
            case "1", "true", "yes", "on": return true
            case "0", "false", "no", "off": return false
            default: throw ConfigurationError("\(key) (\(Self.envName(key))) must be true or false, got `\(raw)`.")
            }
        }

        /// A secret: from the environment variable, else from the file the configuration names.
        func secret(_ key: String, fileKey: String) throws -> String? {
            if let value = secrets.string(forKey: ConfigKey(key), isSecret: true), !value.isEmpty { return value }
            guard let path = string(fileKey) else { return nil }
            guard let contents = FileManager.default.contents(atPath: path), let text = String(data: contents, encoding: .utf8) else {
                throw ConfigurationError("\(fileKey) (\(Self.envName(fileKey))) names \(path), which cannot be read.")
            }
            let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
            return trimmed.isEmpty ? nil : trimmed
        }

        /// `tribunal.apiKey` → `TRIBUNAL_API_KEY`, `slack.apiURL` → `SLACK_API_URL`, as
        /// swift-configuration's environment provider spells it (an underscore only where a
        /// lower-case letter meets an upper-case one).
        static func envName(_ key: String) -> String {
            var out = ""
            var previous: Character?
            for char in key {
                if let previous, previous.isLowercase, char.isUppercase { out.append("_") }
                out.append(char.isLetter || char.isNumber ? char : "_")
                previous = char
            }
            return out.uppercased()
        }
    }
}
