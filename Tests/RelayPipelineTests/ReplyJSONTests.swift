import Foundation
import RelayCore
import TerminalAdapter
import Testing

@testable import RelayPipeline

/// `run --json`'s object: each score under its own name, whatever the backend scored.
@Suite("run --json: a reply as one JSON object")
struct ReplyJSONTests {
    func object(_ reply: Reply) throws -> JSONValue {
        try JSONDecoder().decode(JSONValue.self, from: Data(ReplyJSON(reply, elapsed: .milliseconds(1250)).line.utf8))
    }

    func consensus(verdict: Verdict?, score: Double, meaning: ScoreMeaning, agreeing: Int?) -> ConsensusResult {
        ConsensusResult(
            answer: "It is.", verdict: verdict, agreement: score, confidence: score, answered: 4, asked: 4,
            dissent: [Dissent(model: "d", verdict: .false, reason: "No.")], models: ["a", "b", "c", "d"], elapsed: .seconds(2),
            scoreMeaning: meaning, agreeing: agreeing)
    }

    @Test func aLearnedCouncilsScoreIsAProbabilityAndTheShareThatAgreesIsAgreement() throws {
        let result = consensus(verdict: .true, score: 0.87, meaning: .probabilityRight, agreeing: 3)
        let json = try object(Relay.consensusReply(result, isPrivate: false))
        #expect(json["probability"]?.doubleValue == 0.87)
        #expect(json["agreement"]?.doubleValue == 0.75)
        #expect(json["agreeing"] == .int(3))
        #expect(json["verdict"]?.stringValue == "true")
        #expect(json["models"] == .array(["a", "b", "c", "d"].map(JSONValue.string)))
        #expect(json["dissent"]?.arrayValue?.first?["model"]?.stringValue == "d")
        #expect(json["elapsed_seconds"]?.doubleValue == 1.25)
        #expect(json["text"]?.stringValue == "It is.")
    }

    @Test func noVerdictHasNoProbability() throws {
        let result = consensus(verdict: nil, score: 0, meaning: .probabilityRight, agreeing: 0)
        let json = try object(Relay.consensusReply(result, isPrivate: false))
        #expect(json["verdict"] == .null)
        #expect(json["probability"] == .null)
    }

    @Test func aShareThatAnsweredIsNeitherScore() throws {
        let result = consensus(verdict: nil, score: 1, meaning: .answeredShare, agreeing: nil)
        let json = try object(Relay.consensusReply(result, isPrivate: false))
        #expect(json["probability"] == .null)
        #expect(json["agreement"] == .null)
        #expect(json["answered"] == .int(4))
    }

    @Test func everyKeyIsThereForAnError() throws {
        let json = try object(.error("Type a command."))
        #expect(json["ok"] == .bool(false))
        #expect(json["error"]?.stringValue == "Type a command.")
        for key in ["text", "title", "verdict", "probability", "agreement", "agreeing", "answered", "asked"] {
            #expect(json[key] == .null, "\(key)")
        }
        #expect(json["models"] == .array([]))
    }
}
