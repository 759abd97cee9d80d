public import Configuration
import Foundation
public import RelayCore

/// Typed reads of the relay's configuration (YAML plus environment, environment first), with
/// errors that name the key and its environment variable and say what is accepted.
///
/// Keys are dotted paths (`foo.apiURL`); the environment spells them in capitals with
/// underscores (`FOO_API_URL`). Secrets are read only from the environment or from a file the
/// configuration names, never from the YAML itself.
public struct ConfigValues: Sendable {
    let reader: ConfigReader
    let secrets: ConfigReader
    /// The process environment, for values that name a variable (council `apiKeyEnv`).
    public let environment: [String: String]
    /// Every key read, as its environment variable: what is set and never read is warned about.
    public let readLog: ConfigReadLog

    public init(reader: ConfigReader, secrets: ConfigReader, environment: [String: String], readLog: ConfigReadLog = ConfigReadLog()) {
        self.reader = reader
        self.secrets = secrets
        self.environment = environment
        self.readLog = readLog
    }

    /// A non-empty string, or nil.
    public func string(_ key: String) -> String? {
        readLog.record(key)
        return unrecorded(key)
    }

    /// The variable names of those of `keys` that are given (in the environment, or the YAML
    /// file), for a message that says what is set and what is still missing. Only names: no
    /// value is kept, and nothing counts as read.
    public func given(_ keys: [String]) -> [String] {
        keys.filter { unrecorded($0) != nil }.map(Self.envName)
    }

    /// A non-empty string, without noting the key as read.
    private func unrecorded(_ key: String) -> String? {
        reader.string(forKey: ConfigKey(key)).flatMap { $0.isEmpty ? nil : $0 }
    }

    /// A list of strings (YAML list, or comma-separated in the environment).
    public func strings(_ key: String) -> [String]? {
        readLog.record(key)
        return reader.stringArray(forKey: ConfigKey(key))
    }

    public func int(_ key: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let raw = string(key) else { return nil }
        guard let value = Int(raw), range.contains(value) else {
            throw ConfigurationError("\(key) (\(Self.envName(key))) must be a whole number from \(range.lowerBound) to \(range.upperBound), got `\(raw)`.")
        }
        return value
    }

    /// A duration written in seconds (`20`, `0.5`), above 0 and at most an hour.
    public func seconds(_ key: String) throws -> Duration? {
        guard let raw = string(key) else { return nil }
        guard let value = Double(raw), value > 0, value <= 3600 else {
            throw ConfigurationError("\(key) (\(Self.envName(key))) must be a number of seconds above 0 and at most 3600, got `\(raw)`.")
        }
        return .clampedSeconds(value)
    }

    /// A model's price in US dollars per million tokens (`<prefix>priceIn` and `<prefix>priceOut`):
    /// both or neither (one alone is refused, naming the other); none is "no price". A negative,
    /// or not finite, number is refused.
    public func price(_ prefix: String) throws -> ModelPrice? {
        let inKey = prefix + "priceIn"
        let outKey = prefix + "priceOut"
        func dollars(_ key: String) throws -> Double? {
            guard let raw = string(key) else { return nil }
            guard let value = Double(raw), value.isFinite, value >= 0, value <= 1_000_000 else {
                throw ConfigurationError(
                    "\(key) (\(Self.envName(key))) must be a price in US dollars per million tokens, 0 or more (e.g. 0.15), got `\(raw)`.")
            }
            return value
        }
        switch (try dollars(inKey), try dollars(outKey)) {
        case (nil, nil): return nil
        case (let priceIn?, let priceOut?): return ModelPrice(inPerMillion: priceIn, outPerMillion: priceOut)
        case (nil, _?):
            throw ConfigurationError("\(outKey) (\(Self.envName(outKey))) is set but \(inKey) (\(Self.envName(inKey))) is not: give both prices, or neither.")
        case (_?, nil):
            throw ConfigurationError("\(inKey) (\(Self.envName(inKey))) is set but \(outKey) (\(Self.envName(outKey))) is not: give both prices, or neither.")
        }
    }

    public func bool(_ key: String) throws -> Bool? {
        guard let raw = string(key)?.lowercased() else { return nil }
        switch raw {
        case "1", "true", "yes", "on": return true
        case "0", "false", "no", "off": return false
        default: throw ConfigurationError("\(key) (\(Self.envName(key))) must be true or false, got `\(raw)`.")
        }
    }

    /// An http(s) URL with a host, or nil when unset.
    public func url(_ key: String) throws -> String? {
        guard let value = string(key) else { return nil }
        guard let parsed = URL(string: value), let scheme = parsed.scheme?.lowercased(), ["http", "https"].contains(scheme), parsed.host != nil else {
            throw ConfigurationError("\(key) (\(Self.envName(key))) must be an http:// or https:// URL, got `\(MaskedURL.display(value))`.")
        }
        return value
    }

    /// A secret: from the environment variable, else from the file the configuration names
    /// (refused when it is not its owner's: see ``SecretFile``).
    public func secret(_ key: String, fileKey: String) throws -> String? {
        readLog.record(key)
        if let value = secrets.string(forKey: ConfigKey(key), isSecret: true), !value.isEmpty { return value }
        guard let text = try secretFile(fileKey) else { return nil }
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        return trimmed.isEmpty ? nil : trimmed
    }

    /// The text of the file `fileKey` names, or nil when it names none; refused, naming the key,
    /// its variable and the path, when the file cannot be read or is not its owner's alone.
    public func secretFile(_ fileKey: String) throws -> String? {
        guard let path = string(fileKey) else { return nil }
        return try SecretFile.read(path, subject: "\(fileKey) (\(Self.envName(fileKey))) names \(path), which")
    }

    /// `tribunal.apiKey` → `TRIBUNAL_API_KEY`, `foo.apiURL` → `FOO_API_URL`, as
    /// swift-configuration's environment provider spells it (an underscore only where a
    /// lower-case letter meets an upper-case one).
    public static func envName(_ key: String) -> String {
        // The served Rhea API's section is spelled RHEA_API_* (the loader aliases it).
        var out = key.hasPrefix("api.") ? "RHEA_" : ""
        var previous: Character?
        for char in key {
            if let previous, previous.isLowercase, char.isUppercase { out.append("_") }
            out.append(char.isLetter || char.isNumber ? char : "_")
            previous = char
        }
        return out.uppercased()
    }
}

/// A configuration value that is missing, malformed or out of range: names the key and its
/// environment variable, and says what is accepted. Start-up stops with it (exit code 2).
public struct ConfigurationError: Error, Sendable, CustomStringConvertible {
    public var message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
