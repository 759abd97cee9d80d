import Foundation
import Logging
import RelayPipeline

/// The API's per-key limits counted in the shared store, one round trip per call, so that a key
/// spread over several replicas gets no more than it would from one (docs/replicas.md). The sliding
/// minute is counted to the second and the day to the minute (`CallCountStore`).
struct SharedAPIRateLimiter: APICallLimiter {
    let store: any CallCountStore
    let perMinute: Int
    let perDay: Int
    let logger: Logger

    func admit(_ caller: String, now: Date) async -> APILimitDecision {
        do {
            switch try await store.admitCall(caller: caller, now: now, perMinute: perMinute, perDay: perDay) {
            case .allowed: return .allowed
            case .refused(let perDay, let retryAfter):
                return perDay ? .dayLimit(self.perDay, retryAfter: retryAfter) : .minuteLimit(perMinute, retryAfter: retryAfter)
            }
        } catch {
            logger.error("rhea-api: the shared store did not count a call; refused with 503", metadata: ["error": "\(error)"])
            return .unavailable(retryAfter: 1)
        }
    }
}
