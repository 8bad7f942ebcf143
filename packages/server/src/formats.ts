/** Formats checked outside request schemas (configuration, the operator command), in one place. */

/** Loose on purpose: the address is confirmed by mail, not by a regular expression. */
export const EMAIL = /^[^\s@]+@[^\s@]+$/;

const LABEL = '[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?';
/** A lower-case host name, single labels such as `localhost` included. */
export const HOST_NAME = new RegExp(`^(?=.{1,253}$)${LABEL}(\\.${LABEL})*$`);
/** A lower-case domain name of at least two labels, as custom domains are. */
export const DOMAIN_NAME = new RegExp(`^(?=.{1,253}$)${LABEL}(\\.${LABEL})+$`);
/** A tenant slug: one host label. */
export const SLUG = new RegExp(`^${LABEL}$`);
