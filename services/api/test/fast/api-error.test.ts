import { expect } from 'chai';
import { ApiError, toApiError } from '../../src/http/api-error.js';

describe('API errors', () => {
  it('When an unknown error is mapped, then it is a 500 without internals', () => {
    const e = toApiError(new Error('secret internals'));
    expect(e.status).to.equal(500);
    expect(JSON.stringify(e.body())).not.to.include('secret internals');
  });

  it('When the HTTP layer raises a client error (a malformed %-escape), then it is a 400, not a 500', () => {
    const e = toApiError(Object.assign(new URIError('Failed to decode param'), { status: 400 }));
    expect(e.status).to.equal(400);
    expect(e.body()).to.include({ error: 'Invalid request data' });
  });

  it('When an ApiError has extra fields, then the body carries them', () => {
    expect(new ApiError(429, 'Rate limit exceeded', undefined, { resetIn: 5 }).body()).to.deep.equal({
      success: false,
      error: 'Rate limit exceeded',
      resetIn: 5,
    });
  });
});
