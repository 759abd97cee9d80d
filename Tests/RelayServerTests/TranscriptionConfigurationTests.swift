import Foundation
import RelayCore
import RelayServer
import RelayTestSupport
import RelayTribunal
import Testing

/// Issue 26, point 1: the transcription service is read from `transcription.*` and the
/// environment; unset it is off; a bad setting stops start-up naming the key and its variable.
@Suite("serve: the transcription service's configuration")
struct TranscriptionConfigurationTests {
    static func load(_ environment: [String: String]) async throws -> AppConfiguration {
        try await ConfigurationLoader.load(file: nil, environment: environment, platforms: [])
    }

    @Test func unsetItIsOff() async throws {
        #expect(try await Self.load([:]).transcription == nil)
    }

    @Test func theEnvironmentSetsItUpWithDefaultCaps() async throws {
        let configuration = try await Self.load([
            "TRANSCRIPTION_BASE_URL": "https://api.openai.com/v1", "TRANSCRIPTION_MODEL": "whisper-1", "TRANSCRIPTION_API_KEY_ENV": "VOICE_KEY",
            "VOICE_KEY": "sk-voice-0123456789",
        ])
        let transcription = try #require(configuration.transcription)
        #expect(transcription.baseURL == "https://api.openai.com/v1")
        #expect(transcription.model == "whisper-1")
        #expect(transcription.apiKey == "sk-voice-0123456789")
        #expect(transcription.limits == TranscriptionLimits(maxBytes: 25 * 1024 * 1024, maxSeconds: 300))
        #expect(transcription.timeout == .seconds(60))
        #expect(configuration.warnings.isEmpty, "\(configuration.warnings)")
    }

    @Test func theCapsAndTimeoutCanBeChanged() async throws {
        let configuration = try await Self.load([
            "TRANSCRIPTION_BASE_URL": "http://127.0.0.1:8300/v1", "TRANSCRIPTION_MODEL": "tiny.en", "TRANSCRIPTION_MAX_BYTES": "1048576",
            "TRANSCRIPTION_MAX_SECONDS": "60", "TRANSCRIPTION_TIMEOUT": "15", "TRANSCRIPTION_MEMORY_BUDGET": "8388608",
        ])
        let transcription = try #require(configuration.transcription)
        #expect(transcription.limits == TranscriptionLimits(maxBytes: 1_048_576, maxSeconds: 60, memoryBudget: 8_388_608))
        #expect(transcription.timeout == .seconds(15))
    }

    @Test func badSettingsStopStartUpNamingTheVariable() async throws {
        let base = ["TRANSCRIPTION_BASE_URL": "https://api.openai.com/v1", "TRANSCRIPTION_MODEL": "whisper-1"]
        let cases: [([String: String], String)] = [
            (["TRANSCRIPTION_MODEL": "whisper-1"], "transcription.baseURL (TRANSCRIPTION_BASE_URL) is missing"),
            (["TRANSCRIPTION_BASE_URL": "https://api.openai.com/v1"], "transcription.model (TRANSCRIPTION_MODEL) is missing"),
            (["TRANSCRIPTION_BASE_URL": "ftp://example.com/v1", "TRANSCRIPTION_MODEL": "m"], "transcription.baseURL (TRANSCRIPTION_BASE_URL) must be an http"),
            (
                base.merging(["TRANSCRIPTION_API_KEY_ENV": "NOT_SET_ANYWHERE"]) { $1 },
                "transcription.apiKeyEnv (TRANSCRIPTION_API_KEY_ENV) names NOT_SET_ANYWHERE"
            ),
            (base.merging(["TRANSCRIPTION_MAX_BYTES": "lots"]) { $1 }, "transcription.maxBytes (TRANSCRIPTION_MAX_BYTES)"),
            (
                base.merging(["TRANSCRIPTION_MEMORY_BUDGET": "1000"]) { $1 },
                "transcription.memoryBudget (TRANSCRIPTION_MEMORY_BUDGET) must be a whole number from 1048576"
            ),
            (base.merging(["TRANSCRIPTION_MAX_SECONDS": "0"]) { $1 }, "transcription.maxSeconds (TRANSCRIPTION_MAX_SECONDS)"),
            (base.merging(["TRANSCRIPTION_TIMEOUT": "-1"]) { $1 }, "transcription.timeout (TRANSCRIPTION_TIMEOUT)"),
        ]
        for (environment, expected) in cases {
            await #expect {
                _ = try await Self.load(environment)
            } throws: { error in
                "\(error)".contains(expected)
            }
        }
    }

    @Test func aMisspelledVariableIsWarnedAbout() async throws {
        let configuration = try await Self.load([
            "TRANSCRIPTION_BASE_URL": "https://api.openai.com/v1", "TRANSCRIPTION_MODEL": "whisper-1", "TRANSCRIPTION_MAX_SECOND": "60",
        ])
        #expect(configuration.warnings.contains { $0.contains("TRANSCRIPTION_MAX_SECOND is set") && $0.contains("TRANSCRIPTION_MAX_SECONDS") })
    }
}
