import AsyncHTTPClient
import Foundation
import JWTKit
import NIOHTTP1
import RelayCore
import RelayHTTP
import RelayPlatform

/// The certificates Google signs Google Chat's tokens with, published as a JSON map of key id to
/// an x509 certificate in PEM (`chat@system.gserviceaccount.com`'s for project-number tokens,
/// Google's OAuth certificates for ID tokens): fetched from `GOOGLE_CHAT_CERTS_URL` when first
/// needed and kept by `PublishedKeys`' rules (an unknown `kid` at most once a minute, a day's
/// age, one fetch at a time, the known keys kept when a fetch fails).
enum GoogleChatSigningKeys {
    static let timeout: Duration = .seconds(10)
    static let maxBytes = 1024 * 1024

    static func published(certsURL: String, transport: HTTPTransport, clock: any RelayClock) -> PublishedKeys<JWTKeyCollection> {
        PublishedKeys(clock: clock) { await fetch(certsURL: certsURL, transport: transport) }
    }

    static func fetch(certsURL: String, transport: HTTPTransport) async -> Result<PublishedKeys<JWTKeyCollection>.Fetched, KeyFetchFailure> {
        var request = HTTPClientRequest(url: certsURL)
        request.method = .GET
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "rhea-relay")
        let answer: HTTPAnswer
        do throws(HTTPFailure) {
            answer = try await transport.exchange(request, timeout: timeout, maxBodyBytes: maxBytes)
        } catch {
            return .failure(KeyFetchFailure("the certificates could not be fetched (\(error.label))"))
        }
        guard answer.isSuccess else { return .failure(KeyFetchFailure("the certificates could not be fetched (HTTP \(answer.status))")) }
        guard let certificates = try? JSONDecoder().decode([String: String].self, from: Data(answer.body)) else {
            return .failure(KeyFetchFailure("the certificates are not a JSON map of key id to PEM"))
        }
        let keys = JWTKeyCollection()
        var ids: Set<String> = []
        for (kid, pem) in certificates where !kid.isEmpty {
            // A certificate that is not RSA, or not readable, is skipped, not fatal.
            guard let key = try? Insecure.RSA.PublicKey(certificatePEM: pem) else { continue }
            await keys.add(rsa: key, digestAlgorithm: .sha256, kid: JWKIdentifier(string: kid))
            ids.insert(kid)
        }
        guard !ids.isEmpty else { return .failure(KeyFetchFailure("the certificates hold no RSA key")) }
        return .success(.init(keys: keys, ids: ids))
    }
}
