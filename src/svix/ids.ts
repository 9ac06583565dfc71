/**
 * Identifier patterns from Svix's API contract (Svix OpenAPI 1.947.0:
 * ApplicationOut.id, EndpointOut.id, MessageOut.id). Ids are checked against
 * these before they are put into a request path.
 */
export const APP_ID_PATTERN = /^app_[A-Za-z0-9]{27}$/;
export const ENDPOINT_ID_PATTERN = /^ep_[A-Za-z0-9]{27}$/;
export const MESSAGE_ID_PATTERN = /^msg_[A-Za-z0-9]{27}$/;

/** An endpoint `uid` (EndpointIn.uid): 1 to 256 of these characters. */
export const UID_PATTERN = /^[a-zA-Z0-9\-_.]{1,256}$/;

/**
 * An id or uid that is safe as one path segment: the pattern allows dots, so
 * `.` and `..` (which a URL resolves as "this" and "up") are refused too.
 */
export const isPathSafeUid = (value: string): boolean => UID_PATTERN.test(value) && !/^\.{1,2}$/.test(value);

export const isAppId = (value: string): boolean => APP_ID_PATTERN.test(value);

/** An integration key (`integsk_…`): app-scoped, it works inside one Consumer App only. */
export const isIntegrationKey = (apiKey: string): boolean => apiKey.trim().startsWith('integsk_');
export const isEndpointId = (value: string): boolean => ENDPOINT_ID_PATTERN.test(value);
export const isMessageId = (value: string): boolean => MESSAGE_ID_PATTERN.test(value);
