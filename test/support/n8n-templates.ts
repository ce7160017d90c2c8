/**
 * What the n8n node's Send Template tests share: the components its fields make for the
 * order_ready template (an image header, two body texts, a URL, a quick-reply and a copy-code
 * button) — the fast test builds them from literal fields, the n8n test from expressions and reads
 * them back from the Cloud API simulator — and a template list as GET /cloud/templates answers it.
 */

/** The header's image link. */
export const ORDER_READY_PHOTO = 'https://shop.example/orders/1234.jpg';

/** The components of order_ready for Ada's order 1234 with the coupon SAVE10, in the contract's shape. */
export const ORDER_READY_COMPONENTS = [
  { type: 'header', parameters: [{ type: 'image', image: { link: ORDER_READY_PHOTO } }] },
  {
    type: 'body',
    parameters: [
      { type: 'text', text: 'Ada' },
      { type: 'text', text: '#1234' },
    ],
  },
  { type: 'button', sub_type: 'url', index: 0, parameters: [{ type: 'text', text: '1234' }] },
  {
    type: 'button',
    sub_type: 'quick_reply',
    index: 1,
    parameters: [{ type: 'payload', payload: 'thanks-1234' }],
  },
  {
    type: 'button',
    sub_type: 'copy_code',
    index: 2,
    parameters: [{ type: 'coupon_code', coupon_code: 'SAVE10' }],
  },
];

/**
 * `data.templates` of GET /cloud/templates: order_update in two languages (one paused), a
 * marketing template taking a header, two body texts and a button's, and one without parameters.
 */
export const TEMPLATE_LIST = [
  {
    name: 'order_update',
    language: 'en_US',
    status: 'APPROVED',
    category: 'UTILITY',
    parameters: { body: 1 },
  },
  { name: 'order_update', language: 'ar', status: 'PAUSED', category: 'UTILITY', parameters: { body: 1 } },
  {
    name: 'coupon_drop',
    language: 'pt_BR',
    status: 'APPROVED',
    category: 'MARKETING',
    parameters: { header: 1, body: 2, buttons: { 0: 1 } },
  },
  { name: 'hello', language: 'en_US', status: 'APPROVED', category: 'UTILITY', parameters: {} },
];
