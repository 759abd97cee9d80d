import AsyncHTTPClient
import Foundation
import JWTKit
import NIOHTTP1
import RelayCore
import RelayHTTP
import RelayPlatform

/// The keys the Bot Connector signs its tokens with, from the Bot Framework's OpenID metadata:
/// the metadata's `jwks_uri`, then that key set, kept and fetched again by `PublishedKeys`' rules
/// (an unknown `kid` at most once a minute, a day's age, one fetch at a time). Each key keeps
/// its `endorsements`: the channels (`msteams`) it may sign for.
enum TeamsSigningKeys {
    /// What one fetch found.
    struct KeySet: Sendable {
        /// The metadata's `issuer`: every token's `iss`.
        let issuer: String
        let keys: JWTKeyCollection
        /// Each key's id, with the channels it is endorsed for.
        let endorsements: [String: Set<String>]
    }

    static let timeout: Duration = .seconds(10)
    static let maxBytes = 1024 * 1024

    /// The Bot Connector's keys, fetched from `metadataURL` when needed.
    static func published(metadataURL: String, transport: HTTPTransport, clock: any RelayClock) -> PublishedKeys<KeySet> {
        PublishedKeys(clock: clock) {
            await fetch(metadataURL: metadataURL, transport: transport).map { PublishedKeys.Fetched(keys: $0, ids: Set($0.endorsements.keys)) }
        }
    }

    static func fetch(metadataURL: String, transport: HTTPTransport) async -> Result<KeySet, KeyFetchFailure> {
        do throws(KeyFetchFailure) {
            let metadata = try await get(metadataURL, as: OpenIDMetadata.self, what: "the OpenID metadata", transport: transport)
            guard TeamsServiceURL.isAllowed(metadata.jwksURI) else {
                throw KeyFetchFailure("the OpenID metadata's jwks_uri is not an https URL")
            }
            let body = try await getBytes(metadata.jwksURI, what: "the key set", transport: transport)
            let listed: KeyList
            let jwks: JWKS
            do {
                listed = try JSONDecoder().decode(KeyList.self, from: Data(body))
                jwks = try JSONDecoder().decode(JWKS.self, from: Data(body))
            } catch {
                throw KeyFetchFailure("the key set is not a JWK set")
            }
            let keys = JWTKeyCollection()
            var endorsements: [String: Set<String>] = [:]
            for (jwk, entry) in zip(jwks.keys, listed.keys) {
                // Only RSA signing keys with an id: a key of another kind is skipped, not fatal.
                guard let kid = entry.kid, entry.kty == "RSA", (try? await keys.add(jwk: jwk)) != nil else { continue }
                endorsements[kid] = Set(entry.endorsements ?? [])
            }
            guard !endorsements.isEmpty else { throw KeyFetchFailure("the key set holds no RSA key with an id") }
            return .success(KeySet(issuer: metadata.issuer, keys: keys, endorsements: endorsements))
        } catch {
            return .failure(error)
        }
    }

    private static func get<T: Decodable>(_ url: String, as type: T.Type, what: String, transport: HTTPTransport) async throws(KeyFetchFailure) -> T {
        let body = try await getBytes(url, what: what, transport: transport)
        do throws(PayloadProblem) {
            return try PayloadDecoding.json(type, from: body, as: what)
        } catch {
            throw KeyFetchFailure(error.description)
        }
    }

    private static func getBytes(_ url: String, what: String, transport: HTTPTransport) async throws(KeyFetchFailure) -> [UInt8] {
        var request = HTTPClientRequest(url: url)
        request.method = .GET
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(request, timeout: timeout, maxBodyBytes: maxBytes)
        } catch {
            throw KeyFetchFailure("\(what) could not be fetched (\(error.label))")
        }
        guard answer.isSuccess else { throw KeyFetchFailure("\(what) could not be fetched (HTTP \(answer.status))") }
        return answer.body
    }

    /// The OpenID metadata's two fields the relay reads.
    struct OpenIDMetadata: Decodable {
        var issuer: String
        var jwksURI: String

        enum CodingKeys: String, CodingKey {
            case issuer
            case jwksURI = "jwks_uri"
        }
    }

    /// The key set as the Bot Framework publishes it, for what jwt-kit's `JWK` does not keep.
    struct KeyList: Decodable {
        struct Entry: Decodable {
            var kty: String?
            var kid: String?
            var endorsements: [String]?

            init(from decoder: any Decoder) throws {
                let container = try decoder.container(keyedBy: CodingKeys.self)
                kty = container.lenient(String.self, .kty)
                kid = container.lenient(String.self, .kid)
                endorsements = container.lenient([String].self, .endorsements)
            }

            enum CodingKeys: String, CodingKey { case kty, kid, endorsements }
        }

        var keys: [Entry]
    }
}
