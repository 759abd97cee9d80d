import Foundation
import RelayServer
import RelayTestSupport
import RheaAPI
import Testing

/// Issue 13, point 2: the served API's keys come from a file of digests, its token secret from
/// the environment or a file, and a bad setting stops start-up with a message naming it.
@Suite("serve: the Rhea API's configuration")
struct RheaAPIConfigurationTests {
    func withFile<T>(_ text: String, _ body: (String) async throws -> T) async throws -> T {
        let file = try SecretFileFixture(text, name: "keys")
        defer { file.remove() }
        return try await body(file.path)
    }

    @Test func theKeysFileHoldsDigestsAndComments() async throws {
        let key = APIKeyFile.newKey()
        #expect(key.hasPrefix("rk_") && key.utf8.count == 67)
        let text = "# team keys\n\n\(APIKeyFile.line(for: key))   # the app\nSHA256:\(String(repeating: "AB", count: 32))\n"
        let configuration = try await withFile(text.replacingOccurrences(of: "SHA256:", with: "sha256:")) { path in
            try await ConfigurationLoader.load(file: nil, environment: ["RHEA_API_ENABLED": "1", "RHEA_API_KEYS_FILE": path], platforms: [])
        }
        #expect(configuration.api.enabled)
        #expect(configuration.api.keyDigests == [APIKeyFile.digest(of: key), String(repeating: "ab", count: 32)])
        #expect(!"\(configuration.api)".contains(APIKeyFile.digest(of: key)), "the description counts keys, never shows them")
    }

    @Test func aPlainKeyInTheFileIsRefusedWithItsLine() async throws {
        try await withFile("# keys\nrk_plain_key_by_mistake\n") { path in
            await #expect {
                _ = try await ConfigurationLoader.load(file: nil, environment: ["RHEA_API_ENABLED": "1", "RHEA_API_KEYS_FILE": path], platforms: [])
            } throws: { error in
                let text = "\(error)"
                return text.contains("RHEA_API_KEYS_FILE") && text.contains("line 2") && !text.contains("rk_plain_key_by_mistake")
            }
        }
    }

    @Test func badSettingsStopStartUpNamingTheVariable() async throws {
        let cases: [([String: String], String)] = [
            (["RHEA_API_ENABLED": "1"], "needs a way in"),
            (["RHEA_API_ENABLED": "maybe"], "api.enabled (RHEA_API_ENABLED) must be true or false"),
            (["RHEA_API_ENABLED": "1", "RHEA_API_JWT_SECRET": "short"], "at least 32 characters"),
            (["RHEA_API_KEYS_FILE": "/nonexistent/keys"], "cannot be read"),
            (["RHEA_API_PER_MINUTE": "0"], "api.perMinute (RHEA_API_PER_MINUTE)"),
            (["RHEA_API_CLOCK_SKEW": "900"], "at most 300 seconds"),
            (["RHEA_API_MAX_TOKEN_LIFETIME": "0"], "api.maxTokenLifetime (RHEA_API_MAX_TOKEN_LIFETIME) must be a whole number from 60"),
            (["RHEA_API_MAX_TOKEN_LIFETIME": "-86400"], "RHEA_API_MAX_TOKEN_LIFETIME"),
            (["RHEA_API_MAX_TOKEN_LIFETIME": "1e308"], "RHEA_API_MAX_TOKEN_LIFETIME"),
            (["RHEA_API_MAX_TOKEN_LIFETIME": "99999999999"], "RHEA_API_MAX_TOKEN_LIFETIME"),
        ]
        for (environment, says) in cases {
            await #expect {
                _ = try await ConfigurationLoader.load(file: nil, environment: environment, platforms: [])
            } throws: { error in
                "\(error)".contains(says) && !"\(error)".contains("short")
            }
        }
        // Off by default; a bearer secret alone is a way in; development mode alone too.
        #expect(try await ConfigurationLoader.load(file: nil, environment: [:], platforms: []).api.enabled == false)
        let secret = String(repeating: "s", count: 32)
        let withSecret = try await ConfigurationLoader.load(
            file: nil, environment: ["RHEA_API_ENABLED": "true", "RHEA_API_JWT_SECRET": secret, "RHEA_API_PER_DAY": "50"], platforms: [])
        #expect(withSecret.api.jwtSecret == secret)
        #expect(withSecret.api.perDay == 50)
        // Tokens may live 30 days unless configured otherwise.
        #expect(withSecret.api.maxTokenLifetime == .seconds(30 * 86_400))
        let shortLived = try await ConfigurationLoader.load(file: nil, environment: ["RHEA_API_MAX_TOKEN_LIFETIME": "3600"], platforms: [])
        #expect(shortLived.api.maxTokenLifetime == .seconds(3600))
        let development = try await ConfigurationLoader.load(file: nil, environment: ["RHEA_API_ENABLED": "1", "RHEA_API_DEVELOPMENT": "1"], platforms: [])
        #expect(development.api.developmentMode)
        // Start-up says so loudly.
        #expect(development.api.startupSummary.contains { $0.hasPrefix("WARNING: rhea api in DEVELOPMENT MODE") })
        #expect(!withSecret.api.startupSummary.contains { $0.contains("WARNING") })
        #expect(!withSecret.api.startupSummary.joined().contains(secret))
    }
}
